//! A token in the deployment's URL reaches neither `pull.json` nor the
//! status line, and the URL stored still reaches the deployment.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::TrustGraph;
use super::state::TgState;
use crate::llm::http::key::ApiKey;
use crate::tg::local::{Pulled, STATE_DIR, STATE_FILE, STATE_FORMAT, write_pull};
use crate::tg::{Deployment, TgError};
use crate::tui::component::Component;
use crate::tui::keymap::Keymap;
use crate::tui::state::State;
use crate::tui::theme::Theme;

const TOKEN: &str = "tg-Secret-8f3a9c2e77";

fn key() -> ApiKey {
    ApiKey::new("TRUSTGRAPH_TOKEN", TOKEN.to_owned())
}

fn pulled(url: &str) -> Pulled {
    Pulled {
        format: STATE_FORMAT,
        url: url.to_owned(),
        workspace: "default".into(),
        version: 7,
        at: 0,
        ids: None,
        base: BTreeMap::new(),
    }
}

/// The status line's words for the pull in `dir`.
fn status(dir: &Path) -> Vec<String> {
    let mut s = State::new(dir.to_path_buf(), dir.join("s"), Keymap::defaults(), Theme::default());
    s.parts.get_mut::<TgState>().pulled = super::jobs::load(dir, Some(&key())).unwrap();
    TrustGraph.status(&s)
}

fn stored(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(STATE_DIR).join(STATE_FILE)).unwrap()
}

#[test]
fn a_token_in_the_url_path_is_never_stored_nor_shown_and_is_put_back_to_reach_it() {
    let dir = tempfile::tempdir().unwrap();
    let dep = Deployment::new(
        &format!("https://gw.example/{TOKEN}"),
        "default",
        Some(key()),
        Duration::from_secs(1),
    )
    .unwrap();
    assert_eq!(dep.url(), "https://gw.example/<redacted>/");
    // As `cutline tg pull` writes it.
    write_pull(dir.path(), &pulled(dep.url()), &BTreeMap::new()).unwrap();
    let json = stored(dir.path());
    assert!(!json.contains(TOKEN), "{json}");
    assert!(json.contains(r#""url": "https://gw.example/<redacted>/""#), "{json}");
    let words = status(dir.path());
    assert_eq!(
        words,
        [rust_i18n::t!("tui.tg.status", workspace = "default", host = "gw.example/<redacted>", version = 7).into_owned()]
    );
    assert!(!words[0].contains(TOKEN));
    // The stored URL reaches the deployment with the token put back, and
    // says why not without it.
    let back = Deployment::new(&pulled(dep.url()).url, "default", Some(key()), Duration::from_secs(1)).unwrap();
    assert_eq!(back.url(), dep.url());
    assert_eq!(
        back.endpoint("config").unwrap().as_str(),
        format!("https://gw.example/{TOKEN}/api/v1/config")
    );
    let e = Deployment::new(dep.url(), "default", None, Duration::from_secs(1)).unwrap_err();
    assert!(e.to_string().contains("the token was scrubbed out of it"), "{e}");
}

#[test]
fn a_pull_stored_with_the_token_in_its_url_shows_it_scrubbed() {
    let dir = tempfile::tempdir().unwrap();
    // A `pull.json` written before URLs were stored scrubbed.
    write_pull(dir.path(), &pulled(&format!("http://10.0.0.5:8088/{TOKEN}/")), &BTreeMap::new()).unwrap();
    let words = status(dir.path());
    assert_eq!(
        words,
        [rust_i18n::t!("tui.tg.status", workspace = "default", host = "10.0.0.5:8088/<redacted>", version = 7).into_owned()]
    );
}

#[test]
fn a_url_with_a_credential_in_its_user_info_or_query_is_refused_without_showing_it() {
    for (url, shown) in [
        (format!("https://me:{TOKEN}@gw.example/"), "https://<redacted>@gw.example/"),
        (format!("https://gw.example/?token={TOKEN}"), "https://gw.example/?<redacted>"),
        (format!("https://gw.example/#{TOKEN}"), "https://gw.example/#<redacted>"),
    ] {
        // Whether or not the token is given: the URL keeps none of it.
        for token in [None, Some(key())] {
            let e = Deployment::new(&url, "default", token, Duration::from_secs(1)).unwrap_err();
            assert!(matches!(&e, TgError::Url { url, .. } if url == shown), "{e:?}");
            assert!(!e.to_string().contains(TOKEN), "{e}");
        }
        assert_eq!(crate::tg::shown_url(&url, None), shown);
    }
}
