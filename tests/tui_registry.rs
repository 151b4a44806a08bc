//! The workbench's one list of components (issue 36), checked against the
//! keymap and the help: every action belongs to exactly one component or
//! to the root, every component's keys are bound and listed in the help,
//! every tab has its component, every typing mode its owner.

use std::collections::BTreeSet;

use cutline::tui::component::{Id, Place};
use cutline::tui::keymap::{Action, Keymap};
use cutline::tui::registry::{self, COMPONENTS};
use cutline::tui::state::{Mode, OutPane, Tab};
use cutline::tui::update::ROOT_ACTIONS;

#[test]
fn every_action_belongs_to_one_component_or_the_root() {
    for (a, name, _) in Action::ALL {
        let owners: Vec<Id> = COMPONENTS
            .iter()
            .filter(|c| c.actions().contains(a))
            .map(|c| c.id())
            .collect();
        let root = ROOT_ACTIONS.contains(a);
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
    for a in ROOT_ACTIONS {
        assert!(known.contains(a.name()), "the root owns {a:?}, not in Action::ALL");
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
        Id::Prompts,
        Id::Edit,
        Id::Run,
        Id::Sweep,
        Id::Sessions,
        Id::Migrate,
        Id::Compare,
        Id::Eval,
        Id::Costs,
        Id::Providers,
        Id::Help,
        Id::Search,
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
