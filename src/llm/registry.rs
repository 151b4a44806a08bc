//! The one place a provider choice becomes a provider.
//!
//! `--provider local | replay | NAME` (and the workbench's picker) name a
//! [`Choice`]; the [`Registry`] holds the providers of `cutline.toml`, read
//! once per process (the workbench reloads it when the picker opens), and
//! turns a choice into a [`Target`]: the provider, the model's profile, the
//! provider config's values as a precedence level, and the wire's defaults.
//! `run::plan` takes it from there; no caller builds a provider itself.

use std::sync::{Arc, Mutex};

use super::config::{self, Config, Kind, ProviderConfig, ProvidersFileError};
use super::http;
use super::llama_server::LlamaServer;
use super::params::{Layer, WireDefaults};
use super::profile::{self, Overrides, Profile};
use super::replay::Replay;
use super::wire::Endpoint;
use super::{ErrorKind, Event, EventStream, LlmError, Provider, ProviderInfo, Request};

/// Which provider a run asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The embedded llama-server with Gemma 3 270M.
    Local,
    /// A recorded run played back.
    Replay,
    /// A provider configured in `cutline.toml`.
    Named(String),
}

impl Choice {
    /// The choice a `--provider` word names.
    pub fn parse(word: &str) -> Self {
        match word {
            "local" => Self::Local,
            "replay" => Self::Replay,
            other => Self::Named(other.to_owned()),
        }
    }

    /// The word for it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Local => "local",
            Self::Replay => "replay",
            Self::Named(n) => n,
        }
    }
}

/// A provider ready to run, with what the run plan needs to know of it.
#[derive(Clone)]
pub struct Target {
    /// Who answers.
    pub provider: Arc<dyn Provider>,
    /// What the table says the model accepts.
    pub seed: Profile,
    /// What the provider's config says of it, over everything learned.
    pub config: Overrides,
    /// The provider config's values (the `provider` precedence level).
    pub layer: Layer,
    /// The wire's own defaults.
    pub wire: WireDefaults,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("provider", &self.provider.info())
            .field("profile", &self.seed.family)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// A target for a provider built from `cfg` (with
    /// [`config::build_with_env`], say): its profile, values and wire
    /// defaults from the same entry.
    pub fn configured(provider: Arc<dyn Provider>, cfg: &ProviderConfig) -> Self {
        Self {
            provider,
            seed: cfg.seed(),
            config: cfg.overrides(),
            layer: cfg.layer(),
            wire: wire_defaults(cfg.kind),
        }
    }

    /// A target for any provider, with the open profile and no defaults.
    pub fn plain(provider: Arc<dyn Provider>) -> Self {
        Self {
            provider,
            seed: profile::lookup(Kind::LlamaServer, ""),
            config: Overrides::default(),
            layer: Layer::default(),
            wire: WireDefaults::default(),
        }
    }

    /// A replay of a recording: it takes every parameter as recorded.
    pub fn replay(replay: Replay) -> Self {
        Self {
            provider: Arc::new(replay),
            seed: profile::lookup(Kind::Replay, ""),
            config: Overrides::default(),
            layer: Layer::default(),
            wire: WireDefaults::default(),
        }
    }

    /// Where what is learned of this target's model is kept: its base
    /// URL, else the provider's name.
    pub fn learned_key(&self) -> (String, String) {
        let info = self.provider.info();
        (info.base_url.unwrap_or(info.name), info.model)
    }

    /// What the model accepts now: the table's row, what its Models API
    /// said and what refusals and probes taught (`llm::learned`), then the
    /// provider's config.
    pub fn profile(&self) -> Profile {
        let (base, model) = self.learned_key();
        super::learned::profile(self.seed, &base, &model).with(&self.config)
    }

    /// Whether a continuation can prefill on this target now: the wire can
    /// and the model takes it.
    pub fn prefills(&self) -> bool {
        self.provider.prefills() && self.profile().prefill
    }
}

/// The configured providers, read once.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    config: Config,
}

impl Registry {
    /// Read `cutline.toml` and the user config (see [`config`]).
    pub fn load() -> Result<Self, ProvidersFileError> {
        Config::load().map(Self::new)
    }

    /// A registry over an already-read config.
    pub fn new(config: Config) -> Self {
        Self { config }
    }

    /// The config it holds.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether `choice` runs on the embedded local model.
    pub fn is_local(&self, choice: &Choice) -> bool {
        match choice {
            Choice::Local => true,
            Choice::Named(n) => self.config.get(n).is_some_and(|p| p.kind == Kind::Local),
            Choice::Replay => false,
        }
    }

    /// The target for `choice`, with the model replaced by `model` when
    /// given (the workbench's picker). `Replay` is resolved by the run layer,
    /// which finds the recording ([`Target::replay`]). Nothing is started
    /// or checked on disk: the local server starts on its first request.
    pub fn target(&self, choice: &Choice, model: Option<&str>) -> Result<Target, LlmError> {
        match choice {
            Choice::Local => Ok(local_target(&ProviderConfig::new("local", Kind::Local))),
            Choice::Replay => Err(LlmError::new(
                ErrorKind::BadRequest,
                "a replay needs a recording: choose it with `--provider replay` on a prompt and input",
            )),
            Choice::Named(name) => {
                let mut cfg = self.config.get(name).cloned().ok_or_else(|| self.unknown(name))?;
                if let Some(m) = model {
                    cfg.model = Some(m.to_owned());
                }
                match cfg.kind {
                    Kind::Local => Ok(local_target(&cfg)),
                    _ => Ok(Target::configured(Arc::from(config::build(&cfg)?), &cfg)),
                }
            }
        }
    }

    fn unknown(&self, name: &str) -> LlmError {
        let known: Vec<&str> = self.config.providers.iter().map(|p| p.name.as_str()).collect();
        LlmError::new(
            ErrorKind::BadRequest,
            format!(
                "unknown provider {name:?}: use `local`, `replay` or one configured in cutline.toml (configured: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
        )
    }
}

/// The defaults a wire imposes: Anthropic requires a max-token limit.
pub fn wire_defaults(kind: Kind) -> WireDefaults {
    WireDefaults {
        max_tokens: kind.spec().max_tokens,
    }
}

/// The model label of the embedded local server.
pub const LOCAL_MODEL: &str = "gemma-3-270m-q4_k_m";

fn local_target(cfg: &ProviderConfig) -> Target {
    let seed = profile::lookup(Kind::LlamaServer, LOCAL_MODEL);
    Target {
        provider: Arc::new(Local {
            cfg: cfg.clone(),
            server: Arc::new(Mutex::new(None)),
        }),
        seed,
        config: cfg.profile,
        layer: cfg.layer(),
        wire: WireDefaults::default(),
    }
}

/// The embedded llama-server, started on the first request and reached
/// through the same [`LlamaServer`] wire as any other.
#[derive(Clone)]
struct Local {
    cfg: ProviderConfig,
    server: Arc<Mutex<Option<LlamaServer>>>,
}

impl Local {
    fn started(&self) -> Option<LlamaServer> {
        self.server.lock().ok().and_then(|g| g.clone())
    }
}

impl Provider for Local {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.cfg.name.clone(),
            kind: "llama_server".into(),
            model: LOCAL_MODEL.into(),
            base_url: self.started().map(|s| s.endpoint.base_url),
        }
    }

    fn stream(&self, req: Request) -> EventStream {
        let me = self.clone();
        http::spawn_stream(move |tx| async move {
            use futures_util::StreamExt;
            let server = match me.started() {
                Some(s) => s,
                None => match super::local::ensure_started().await {
                    Ok(url) => {
                        let mut ep = Endpoint::new(&me.cfg.name, &url, LOCAL_MODEL);
                        ep.retry = me.cfg.retry_policy();
                        ep.set_timeouts(me.cfg.timeouts());
                        let s = LlamaServer::new(ep);
                        if let Ok(mut g) = me.server.lock() {
                            *g = Some(s.clone());
                        }
                        s
                    }
                    Err(e) => {
                        let _ = tx.send(Event::Error(e)).await;
                        return;
                    }
                },
            };
            let mut s = server.stream(req);
            while let Some(ev) = s.next().await {
                if tx.send(ev).await.is_err() {
                    return;
                }
            }
        })
    }

    fn prefills(&self) -> bool {
        true
    }
}
