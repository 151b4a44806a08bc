//! What the Models API readers of Ollama (`llm::ollama::models`) and Gemini
//! (`llm::gemini::models`) share: only a model no table row knows by name
//! (it falls to the catch-all row) is asked about, by one request whose
//! JSON answer is read at the time it came; whether the answer says the
//! model thinks decides its defaults, and an answer that does not say
//! assumes nothing. `run` asks once per model and keeps the answer with
//! what was learned (`llm::learned`).

use reqwest::Method;
use serde_json::Value;

use super::kind::Kind;
use super::learned::ModelsApi;
use super::profile::Overrides;
use super::wire::json::{Body, Call};
use super::wire::{Auth, Endpoint};

/// The one request that asks a Models API about a model.
#[derive(Debug)]
pub struct Ask {
    /// The method (`GET`, or Ollama's `POST /api/show`).
    pub method: Method,
    /// The URL.
    pub url: String,
    /// What it sends.
    pub body: Body,
    /// How the key goes.
    pub auth: Auth,
}

/// Whether `kind`'s Models API is asked about `model`: no table row knows
/// it by name, so it falls to `generic`, the kind's catch-all row.
pub fn asks(kind: Kind, generic: &str, model: &str) -> bool {
    super::profile::lookup(kind, model).family == generic
}

/// Send `ask` on `endpoint` and read its answer with `read` at the time it
/// came; `Ok(None)` when the API does not know the model (404).
pub fn describe(endpoint: Endpoint, ask: Ask, read: fn(&Value, u64) -> ModelsApi) -> super::Describe {
    Box::pin(async move {
        let v = endpoint
            .send_json(Call::new(ask.method, &ask.url, ask.body, ask.auth))
            .await?;
        Ok(v.map(|v| read(&v, super::learned::now_ms())))
    })
}

/// What an answer read at `now_ms` says, by whether it says the model
/// thinks (`thinks`): the facts of a `thinking` model, or of a `plain` one;
/// nothing when it does not say.
pub fn by_thinking(thinks: Option<bool>, thinking: Overrides, plain: Overrides, now_ms: u64) -> ModelsApi {
    let facts = match thinks {
        Some(true) => thinking,
        Some(false) => plain,
        None => Overrides::default(),
    };
    ModelsApi {
        fetched_ms: now_ms,
        facts,
        ..ModelsApi::default()
    }
}
