//! UI languages: which one a person reads, and the catalogues.
//!
//! Only text for people is translated: the workbench and `--output pretty`.
//! Machine output (JSONL records, the JSON envelope, error categories,
//! field names) never is. Messages live in `locales/<lang>.toml`, compiled
//! into the binary by rust-i18n (chosen over fluent for its one `t!` macro
//! and compile-time catalogues with a fallback chain; plurals are not
//! needed here); a key missing in a catalogue falls back to English, and
//! `tests/i18n.rs` fails when a catalogue lacks a key English has.

/// A UI language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    /// English (the fallback).
    #[default]
    En,
    /// Simplified Chinese.
    ZhCn,
    /// Spanish.
    Es,
}

impl Lang {
    /// Every language, in `--lang` order.
    pub const ALL: [Self; 3] = [Self::En, Self::ZhCn, Self::Es];

    /// The catalogue's locale name.
    pub fn locale(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::ZhCn => "zh-CN",
            Self::Es => "es",
        }
    }

    /// The language a tag names: `zh`, `zh-CN`, `zh_CN.UTF-8`, `zh-Hans`,
    /// `es_MX`, `en_GB.UTF-8`, `C`, `POSIX`; `None` for any other.
    pub fn parse(tag: &str) -> Option<Self> {
        let base = tag.split(['.', '@']).next().unwrap_or_default();
        let lang = base.split(['_', '-']).next().unwrap_or_default().to_ascii_lowercase();
        match lang.as_str() {
            "zh" => Some(Self::ZhCn),
            "es" => Some(Self::Es),
            "en" | "c" | "posix" => Some(Self::En),
            _ => None,
        }
    }

    /// The language to use: `--lang` when given, else the first of
    /// `LC_ALL`, `LC_MESSAGES`, `LANG` that is set and non-empty (as POSIX
    /// orders them), English when that one names a language without a
    /// catalogue. `env` looks a variable up.
    pub fn choose(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Result<Self, UnknownLang> {
        if let Some(f) = flag {
            return Self::parse(f).ok_or_else(|| UnknownLang(f.to_owned()));
        }
        Ok(["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .find_map(|v| env(v).filter(|s| !s.is_empty()))
            .and_then(|tag| Self::parse(&tag))
            .unwrap_or_default())
    }

    /// Make this the language of every message from now on.
    pub fn apply(self) {
        rust_i18n::set_locale(self.locale());
    }
}

/// A `--lang` that names no UI language (the tag as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--lang {0:?}: no such UI language; choose en, zh or es")]
pub struct UnknownLang(pub String);

/// `s` padded with spaces after it to `width` terminal columns (a CJK
/// character takes two), so translated headers stay aligned.
pub fn left(s: &str, width: usize) -> String {
    let w = unicode_width::UnicodeWidthStr::width(s);
    format!("{s}{}", " ".repeat(width.saturating_sub(w)))
}

/// `s` padded with spaces before it to `width` terminal columns.
pub fn right(s: &str, width: usize) -> String {
    let w = unicode_width::UnicodeWidthStr::width(s);
    format!("{}{s}", " ".repeat(width.saturating_sub(w)))
}

/// "line 3" or "lines 3–5": the lines a skipped span covers.
pub fn line_range(from: usize, to: usize) -> String {
    if from == to {
        rust_i18n::t!("tui.pane.skipped_line", n = from).into_owned()
    } else {
        rust_i18n::t!("tui.pane.skipped_lines", from = from, to = to).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_the_posix_order() {
        assert_eq!(Lang::parse("zh_CN.UTF-8"), Some(Lang::ZhCn));
        assert_eq!(Lang::parse("zh-Hans"), Some(Lang::ZhCn));
        assert_eq!(Lang::parse("es_MX"), Some(Lang::Es));
        assert_eq!(Lang::parse("C"), Some(Lang::En));
        assert_eq!(Lang::parse("de_DE.UTF-8"), None);
        let env = |v: &str| match v {
            "LC_ALL" => Some(String::new()),
            "LC_MESSAGES" => Some("es_ES.UTF-8".into()),
            "LANG" => Some("zh_CN.UTF-8".into()),
            _ => None,
        };
        assert_eq!(Lang::choose(None, env), Ok(Lang::Es));
        assert_eq!(Lang::choose(Some("zh"), env), Ok(Lang::ZhCn));
        assert_eq!(Lang::choose(None, |_| Some("de_DE".into())), Ok(Lang::En));
        assert!(
            Lang::choose(Some("klingon"), env)
                .unwrap_err()
                .to_string()
                .contains("choose en, zh or es")
        );
    }

    #[test]
    fn padding_counts_columns() {
        assert_eq!(left("提示词", 8), "提示词  ");
        assert_eq!(right("ok", 4), "  ok");
        assert_eq!(left("too long", 3), "too long");
    }
}
