//! The workbench's one list of components (issue 36), checked against the
//! keymap and the help: every action belongs to exactly one component or
//! to the root, every component's keys are bound and listed in the help,
//! every tab has its component, every typing mode its owner.

use std::collections::BTreeSet;

use cutline::tui::component::{Id, Place};
use cutline::tui::keymap::{Action, Keymap};
use cutline::tui::registry::{self, COMPONENTS};
use cutline::tui::state::{Mode, OutPane, Tab};
use cutline::tui::update::is_root;

#[test]
fn every_action_belongs_to_one_component_or_the_root() {
    for (a, name, _) in Action::ALL {
        let owners: Vec<Id> = COMPONENTS
            .iter()
            .filter(|c| c.actions().contains(a))
            .map(|c| c.id())
            .collect();
        let root = is_root(*a);
        assert!(
            owners.len() + usize::from(root) == 1,
            "action {name}: owned by {owners:?}, root: {root}"
        );
    }
    // And nothing is owned that the keymap does not know.
    let known: BTreeSet<&str> = Action::ALL.iter().map(|(_, n, _)| *n).collect();
    for c in COMPONENTS {
        for a in c.actions() {
            assert!(known.contains(a.name()), "{:?} owns {a:?}, not in Action::ALL", c.id());
        }
    }
}

#[test]
fn every_components_keys_are_bound_and_in_the_help() {
    let keymap = Keymap::defaults();
    let help = cutline::tui::help::view::entries(&keymap);
    for c in COMPONENTS {
        for a in c.actions() {
            let keys = keymap.keys_for(*a);
            assert!(!keys.is_empty(), "{:?}: {a:?} has no default key", c.id());
            assert!(!a.describe().is_empty(), "{:?}: {a:?} is not described", c.id());
            // The help lists the actions first, in `Action::ALL`'s order.
            let at = Action::ALL.iter().position(|(x, _, _)| x == a);
            let line = at.and_then(|i| help.get(i));
            assert!(
                line.is_some_and(|(k, d)| *k == keys.join(" ") && !d.is_empty()),
                "{:?}: {a:?} ({}) is not in the help: {line:?}",
                c.id(),
                a.name()
            );
        }
    }
}

#[test]
fn every_tab_and_view_has_its_one_component() {
    let ids: Vec<Id> = COMPONENTS.iter().map(|c| c.id()).collect();
    let unique: BTreeSet<String> = ids.iter().map(|i| format!("{i:?}")).collect();
    assert_eq!(unique.len(), ids.len(), "an id registered twice: {ids:?}");
    for t in Tab::ALL {
        let n = COMPONENTS.iter().filter(|c| c.place() == Place::Tab(t)).count();
        assert_eq!(n, 1, "tab {t:?} has {n} components");
    }
    // The views issue 36 names, each a component of its own.
    for id in [
        Id("prompts"),
        Id("edit"),
        Id("run"),
        Id("sweep"),
        Id("sessions"),
        Id("migrate"),
        Id("compare"),
        Id("eval"),
        Id("costs"),
        Id("providers"),
        Id("help"),
        Id("search"),
    ] {
        assert!(registry::get(id).is_some(), "{id:?} is not registered");
    }
    for c in COMPONENTS {
        match c.place() {
            Place::Under(under) => assert!(registry::get(under).is_some(), "{:?} is under nothing", c.id()),
            Place::Over(t) | Place::Tab(t) => assert!(Tab::ALL.contains(&t)),
            Place::Popup | Place::Marks(_) | Place::Job => {}
        }
    }
}

#[test]
fn every_typing_mode_has_one_owner() {
    let modes = [
        Mode::Filter,
        Mode::Insert,
        Mode::Picker,
        Mode::ModelInput(String::new()),
        Mode::Help,
        Mode::EvalLimits(String::new()),
        Mode::Search(OutPane::Json, String::new()),
    ];
    for m in modes {
        let n = COMPONENTS.iter().filter(|c| c.owns_mode(&m)).count();
        assert_eq!(n, 1, "{m:?} has {n} owners");
    }
    // The root's own: normal keys and the limit being typed.
    for m in [Mode::Normal, Mode::LimitInput(String::new())] {
        assert!(registry::mode_owner(&m).is_none(), "{m:?} is the root's");
    }
}

#[test]
fn every_components_own_keys_are_bound_named_and_in_the_help() {
    let own = registry::own_keys();
    let keymap = Keymap::defaults().with_own(&own);
    let help = cutline::tui::help::view::entries(&keymap);
    for (i, k) in own.iter().enumerate() {
        assert!(
            Action::by_name(k.name).is_none(),
            "{} is a built-in action's name",
            k.name
        );
        let keys = keymap.keys_for(Action::Own(k.name));
        assert!(!keys.is_empty(), "{} has no key", k.name);
        assert!(
            registry::owner(Action::Own(k.name)).is_some(),
            "{} has no owner",
            k.name
        );
        // The help lists them after the built-in actions, in order.
        assert_eq!(
            help[Action::ALL.len() + i].0,
            keys.join(" "),
            "{} is not in the help",
            k.name
        );
    }
}

/// The way a component added later brings its keys: bound at their
/// defaults unless a built-in has the key, rebound by name in `[keys]`,
/// listed in the help after the built-in actions.
#[test]
fn a_components_own_key_is_bound_rebindable_and_listed() {
    use cutline::tui::keymap::OwnKey;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    const PUSH: OwnKey = OwnKey {
        name: "push",
        keys: &["T", "q"],
        help: "tui.help.any",
    };
    let ev = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let mut keymap = Keymap::defaults().with_own(&[PUSH]);
    assert_eq!(keymap.action(&ev('T')), Some(Action::Own("push")));
    assert_eq!(keymap.action(&ev('q')), Some(Action::Quit), "a built-in key stays");
    let help = cutline::tui::help::view::entries(&keymap);
    assert_eq!(
        help.len(),
        cutline::tui::help::view::entries(&Keymap::defaults()).len() + 1
    );
    assert_eq!(help[Action::ALL.len()].0, "T");
    let table: toml::Table = "push = \"F7\"".parse().unwrap();
    assert!(keymap.apply_table(&table).is_empty());
    assert_eq!(keymap.keys_for(Action::Own("push")), vec!["F7"]);
}
