//! Provider wire formats against a local scripted server: the exact request
//! each provider sends (path, headers, JSON body), its real stream format
//! decoded into a transcript, structured-output bodies, retries, auth and
//! context-length failures, dropped and malformed streams, and the API key
//! never showing up anywhere.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use cutline::llm::anthropic::Anthropic;
use cutline::llm::config::{self, Config, Kind, ProviderConfig};
use cutline::llm::gemini::Gemini;
use cutline::llm::ollama::Ollama;
use cutline::llm::openai::OpenAi;
use cutline::llm::params::Structured;
use cutline::llm::registry::Target;
use cutline::llm::structured::{self, Mode};
use cutline::llm::{self, ErrorKind, FinishReason, Provider, Request, Thinking, Transcript, Usage};
use serde_json::{Value, json};
use support::{Reply, Server};

const ENV: &str = "CUTLINE_TEST_KEY";
const KEY: &str = "sk-test-Zq8Vb3Nw7Lp2Xc9RkT4";

fn env(name: &str) -> Option<String> {
    (name == ENV).then(|| KEY.to_owned())
}

fn no_env(_: &str) -> Option<String> {
    None
}

/// The four remote protocols (and the compatible flavour of OpenAI).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum P {
    OpenAi,
    Compat,
    Anthropic,
    Gemini,
    Ollama,
}

const ALL: [P; 5] = [P::OpenAi, P::Compat, P::Anthropic, P::Gemini, P::Ollama];

impl P {
    fn kind(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Compat => "openai-compatible",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Ollama => "ollama",
        }
    }

    fn base(self, url: &str) -> String {
        match self {
            Self::OpenAi | Self::Compat => format!("{url}/v1"),
            _ => url.to_owned(),
        }
    }

    fn path(self) -> &'static str {
        match self {
            Self::OpenAi | Self::Compat => "/v1/chat/completions",
            Self::Anthropic => "/v1/messages",
            Self::Gemini => "/v1beta/models/m-test:streamGenerateContent?alt=sse",
            Self::Ollama => "/api/chat",
        }
    }

    /// The header carrying the key and its expected value.
    fn auth(self) -> (&'static str, String) {
        match self {
            Self::Anthropic => ("x-api-key", KEY.to_owned()),
            Self::Gemini => ("x-goog-api-key", KEY.to_owned()),
            _ => ("authorization", format!("Bearer {KEY}")),
        }
    }

    /// A complete answer "Hi" (stop, 3 prompt tokens, 1 completion token).
    fn ok(self) -> Reply {
        match self {
            Self::OpenAi | Self::Compat => Reply::data(&[
                r#"{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
                r#"{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
                r#"{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
                r#"{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#,
                "[DONE]",
            ]),
            Self::Anthropic => Reply::sse(&[
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m-test\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}",
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}",
                "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}",
                "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}",
                "event: message_stop\ndata: {\"type\":\"message_stop\"}",
            ]),
            Self::Gemini => Reply::data(&[
                r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4},"modelVersion":"m-test"}"#,
            ]),
            Self::Ollama => Reply::ndjson(&[
                r#"{"model":"m-test","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},"done":false}"#,
                r#"{"model":"m-test","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1,"prompt_eval_count":3,"eval_count":1}"#,
            ]),
        }
    }

    /// "Hal" + "f" and then the connection drops mid-body.
    fn cut(self) -> Reply {
        match self {
            Self::OpenAi | Self::Compat => Reply::data(&[
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hal"},"finish_reason":null}]}"#,
                r#"{"choices":[{"index":0,"delta":{"content":"f"},"finish_reason":null}]}"#,
            ]),
            Self::Anthropic => Reply::sse(&[
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hal\"}}",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"f\"}}",
            ]),
            Self::Gemini => Reply::data(&[
                r#"{"candidates":[{"content":{"parts":[{"text":"Hal"}],"role":"model"},"index":0}]}"#,
                r#"{"candidates":[{"content":{"parts":[{"text":"f"}],"role":"model"},"index":0}]}"#,
            ]),
            Self::Ollama => Reply::ndjson(&[
                r#"{"message":{"role":"assistant","content":"Hal"},"done":false}"#,
                r#"{"message":{"role":"assistant","content":"f"},"done":false}"#,
            ]),
        }
        .cut()
    }

    /// A 401 whose body echoes the key, as some servers do.
    fn unauthorized(self) -> Reply {
        let body = match self {
            Self::Anthropic => {
                format!(
                    r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {KEY}"}}}}"#
                )
            }
            Self::Gemini => {
                format!(r#"{{"error":{{"code":401,"message":"bad key {KEY}","status":"UNAUTHENTICATED"}}}}"#)
            }
            Self::Ollama => format!(r#"{{"error":"unauthorized: {KEY}"}}"#),
            _ => format!(
                r#"{{"error":{{"message":"Incorrect API key provided: {KEY}. Or masked: sk-test-Zq8V****************RkT4.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
            ),
        };
        Reply::status(401, &body)
    }
}

/// A config for `p` on `server` with fast retries; `extra` is more TOML.
fn cfg(p: P, server: &Server, extra: &str) -> ProviderConfig {
    let text = format!(
        "[[provider]]\nname = \"t\"\nkind = \"{}\"\nbase_url = \"{}\"\nmodel = \"m-test\"\napi_key_env = \"{ENV}\"\n\
         max_retries = 2\nretry_base_secs = 0.001\nretry_max_wait_secs = 3\n{extra}\n",
        p.kind(),
        p.base(&server.url()),
    );
    config::parse(&text, Path::new("test.toml")).expect("config").remove(0)
}

fn provider(p: P, server: &Server, extra: &str) -> Box<dyn Provider> {
    config::build_with_env(&cfg(p, server, extra), &env).expect("build")
}

async fn run(p: &dyn Provider, req: Request) -> Transcript {
    tokio::time::timeout(Duration::from_secs(20), llm::collect(p.stream(req), |_, _| {}))
        .await
        .expect("the stream ended")
}

fn req(prompt: &str) -> Request {
    Request {
        prompt: prompt.into(),
        ..Request::default()
    }
}

fn full_req() -> Request {
    Request {
        system: "Extract fruit.".into(),
        prompt: "apples and pears".into(),
        max_tokens: Some(5),
        stop: vec!["\n\n".into()],
        temperature: Some(0.0),
        ..Request::default()
    }
}

fn closed_schema() -> Value {
    json!({
        "title": "Fruit list",
        "type": "object",
        "properties": {"fruit": {"type": "array", "items": {"type": "string"}}},
        "required": ["fruit"],
        "additionalProperties": false
    })
}

fn open_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"fruit": {"type": "array", "items": {"type": "string"}}, "note": {"type": "string"}},
        "required": ["fruit"]
    })
}

fn with_schema(schema: &Value) -> Request {
    Request {
        response_schema: Some(schema.clone()),
        ..full_req()
    }
}

fn assert_ok_hi(t: &Transcript) {
    assert_eq!(t.error, None);
    assert_eq!(t.text, "Hi");
    assert_eq!(t.finish, Some(FinishReason::Stop));
    assert_eq!(
        t.usage,
        Usage {
            prompt_tokens: Some(3),
            completion_tokens: Some(1),
            ..Default::default()
        }
    );
}

// ---------------------------------------------------------------- OpenAI

#[tokio::test]
async fn openai_request_and_truncated_stream() {
    let server = Server::start(vec![Reply::data(&[
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-test","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-test","choices":[{"index":0,"delta":{"content":"[\"apple"},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-test","choices":[{"index":0,"delta":{"content":"\", \"pe"},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-test","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}],"usage":null}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-test","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}"#,
        "[DONE]",
    ])])
    .await;
    let p = provider(P::OpenAi, &server, "");
    let t = run(p.as_ref(), full_req()).await;
    let r = server.only_request();
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.json(),
        json!({
            "model": "m-test",
            "messages": [
                {"role": "system", "content": "Extract fruit."},
                {"role": "user", "content": "apples and pears"}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_completion_tokens": 5,
            "temperature": 0.0,
            "stop": ["\n\n"]
        })
    );
    assert_eq!(t.error, None);
    assert_eq!(t.text, "[\"apple\", \"pe");
    assert_eq!(t.finish, Some(FinishReason::Length));
    assert_eq!(t.raw_reason.as_deref(), Some("length"));
    assert_eq!(
        t.usage,
        Usage {
            prompt_tokens: Some(12),
            completion_tokens: Some(5),
            ..Default::default()
        }
    );
    assert_eq!(
        p.info(),
        llm::ProviderInfo {
            name: "t".into(),
            kind: "openai".into(),
            model: "m-test".into(),
            base_url: Some(format!("{}/v1", server.url())),
        }
    );
}

#[tokio::test]
async fn openai_compatible_sends_max_tokens_and_no_key_when_none_is_configured() {
    let server = Server::start(vec![P::Compat.ok()]).await;
    let text = format!(
        "[[provider]]\nname = \"vllm\"\nkind = \"openai-compatible\"\nbase_url = \"{}/v1/\"\nmodel = \"m-test\"\n",
        server.url()
    );
    let c = config::parse(&text, Path::new("x.toml")).unwrap().remove(0);
    let p = config::build_with_env(&c, &no_env).unwrap();
    let t = run(
        p.as_ref(),
        Request {
            system: String::new(),
            ..full_req()
        },
    )
    .await;
    assert_ok_hi(&t);
    let r = server.only_request();
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), None);
    assert_eq!(
        r.json(),
        json!({
            "model": "m-test",
            "messages": [{"role": "user", "content": "apples and pears"}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 5,
            "temperature": 0.0,
            "stop": ["\n\n"]
        })
    );
    assert_eq!(p.info().kind, cutline::llm::WireKind::OpenaiCompatible);
}

#[tokio::test]
async fn openai_finish_reasons_and_refusal() {
    use cutline::llm::openai::finish_reason;
    assert_eq!(finish_reason("length"), FinishReason::Length);
    assert_eq!(finish_reason("stop"), FinishReason::Stop);
    assert_eq!(finish_reason("tool_calls"), FinishReason::ToolCalls);
    assert_eq!(finish_reason("content_filter"), FinishReason::ContentFilter);
    let server = Server::start(vec![Reply::data(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ])])
    .await;
    let t = run(provider(P::OpenAi, &server, "").as_ref(), req("x")).await;
    assert_eq!(t.text, "I can't help with that.");
    assert_eq!(t.finish, Some(FinishReason::ContentFilter));
    assert_eq!(t.raw_reason.as_deref(), Some("refusal"));
}

#[tokio::test]
async fn openai_structured_body_is_strict_only_for_strict_schemas() {
    for (schema, strict, name) in [
        (closed_schema(), true, "Fruit_list".to_owned()),
        (open_schema(), false, structured::schema_name(&open_schema())),
    ] {
        let server = Server::start(vec![P::OpenAi.ok()]).await;
        let t = run(provider(P::OpenAi, &server, "").as_ref(), with_schema(&schema)).await;
        assert_ok_hi(&t);
        let body = server.only_request().json();
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}})
        );
        assert_eq!(body["messages"][0]["content"], "Extract fruit.");
    }
}

#[tokio::test]
async fn llama_server_openai_endpoint_gets_the_wrapped_response_format() {
    let server = Server::start(vec![P::Compat.ok()]).await;
    let p = provider(P::Compat, &server, "");
    run(p.as_ref(), with_schema(&closed_schema())).await;
    let body = server.only_request().json();
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "Fruit_list", "schema": closed_schema(), "strict": true}})
    );
    assert_eq!(body["max_tokens"], json!(5));
    assert!(body.get("max_completion_tokens").is_none());
}

/// A json prompt with the closed schema, for plans.
fn fruit_spec(structured: Option<Structured>) -> cutline::run::Spec {
    let text = format!(
        "id = \"fruit\"\nresponse-type = \"json\"\nsystem = \"Extract fruit.\"\nprompt = \"apples and pears\"\nschema = '{}'\n",
        closed_schema()
    );
    let (p, _) = cutline::prompt::load_toml("fruit.toml", &text).expect("prompt");
    let mut spec = cutline::run::Spec::new(p, serde_json::Map::new());
    spec.cli.structured = structured;
    spec
}

#[tokio::test]
async fn a_provider_structured_mode_applies_unless_the_command_line_says_otherwise() {
    let server = Server::start(vec![P::OpenAi.ok(), P::OpenAi.ok(), P::OpenAi.ok()]).await;
    let target = |extra: &str| {
        let c = cfg(P::OpenAi, &server, extra);
        Target::configured(std::sync::Arc::from(config::build_with_env(&c, &env).unwrap()), &c)
    };
    // The provider says `prompt`; the command line says nothing.
    let t = target("structured = \"prompt\"");
    cutline::run::execute(&t, &fruit_spec(None), None, |_, _| {})
        .await
        .unwrap();
    // The provider says `off`.
    let t = target("structured = \"off\"");
    cutline::run::execute(&t, &fruit_spec(None), None, |_, _| {})
        .await
        .unwrap();
    // The provider says `prompt`, the command line `native`: the command line wins.
    let t = target("structured = \"prompt\"");
    let outcome = cutline::run::execute(&t, &fruit_spec(Some(Structured::Native)), None, |_, _| {})
        .await
        .unwrap();
    assert_eq!(outcome.record.structured_path.as_str(), "native");
    let bodies: Vec<Value> = server.requests().iter().map(support::Recorded::json).collect();
    assert!(bodies[0].get("response_format").is_none());
    assert_eq!(
        bodies[0]["messages"][0]["content"],
        json!(structured::augment_system("Extract fruit.", &closed_schema()))
    );
    assert!(bodies[1].get("response_format").is_none());
    assert_eq!(bodies[1]["messages"][0]["content"], "Extract fruit.");
    assert_eq!(bodies[2]["response_format"]["json_schema"]["schema"], closed_schema());
}

// ------------------------------------------------------------- Anthropic

#[tokio::test]
async fn anthropic_request_and_truncated_stream() {
    let server = Server::start(vec![Reply::sse(&[
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m-test\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
        "event: ping\ndata: {\"type\": \"ping\"}",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"{\\\"fruit\\\": [\"}}",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\\\"apple\\\"\"}}",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":5}}",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}",
    ])])
    .await;
    // No max_tokens in the request: the wire's required default (4096) is sent.
    let p = provider(P::Anthropic, &server, "");
    let t = run(
        p.as_ref(),
        Request {
            max_tokens: None,
            temperature: Some(0.5),
            ..full_req()
        },
    )
    .await;
    let r = server.only_request();
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2026-10-21"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(
        r.json(),
        json!({
            "model": "m-test",
            "max_tokens": 4096,
            "system": "Extract fruit.",
            "messages": [{"role": "user", "content": "apples and pears"}],
            "stream": true,
            "temperature": 0.5,
            "stop_sequences": ["\n\n"]
        })
    );
    assert_eq!(t.error, None);
    assert_eq!(t.text, "{\"fruit\": [\"apple\"");
    assert_eq!(t.finish, Some(FinishReason::Length));
    assert_eq!(t.raw_reason.as_deref(), Some("max_tokens"));
    assert_eq!(
        t.usage,
        Usage {
            prompt_tokens: Some(25),
            completion_tokens: Some(5),
            ..Default::default()
        }
    );
}

#[tokio::test]
async fn anthropic_stop_reasons() {
    use cutline::llm::anthropic::finish_reason;
    assert_eq!(finish_reason("max_tokens", false), FinishReason::Length);
    assert_eq!(finish_reason("end_turn", false), FinishReason::Stop);
    assert_eq!(finish_reason("stop_sequence", false), FinishReason::Stop);
    assert_eq!(finish_reason("tool_use", false), FinishReason::ToolCalls);
    assert_eq!(finish_reason("tool_use", true), FinishReason::Stop);
    assert_eq!(finish_reason("refusal", false), FinishReason::ContentFilter);
}

#[tokio::test]
async fn anthropic_structured_output_config_carries_the_fitted_schema_and_effort() {
    let server = Server::start(vec![P::Anthropic.ok()]).await;
    // `run::plan` decides the form (`output_config` unless the request says
    // tool) and fits the schema; the wire sends what it is given.
    let t = run(
        provider(P::Anthropic, &server, "").as_ref(),
        Request {
            effort: Some(cutline::llm::params::Effort::High),
            ..with_schema(&closed_schema())
        },
    )
    .await;
    assert_ok_hi(&t);
    let body = server.only_request().json();
    assert_eq!(
        body["output_config"],
        json!({"effort": "high", "format": {"type": "json_schema", "schema": closed_schema()}})
    );
    assert!(body.get("tools").is_none());
}

#[tokio::test]
async fn anthropic_structured_forced_tool_streams_the_tool_input_as_text() {
    let tool_stream = || {
        Reply::sse(&[
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":40,\"output_tokens\":1}}}",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Fruit_list\",\"input\":{}}}",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"fruit\\\": [\\\"ap\"}}",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ple\\\"]}\"}}",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":9}}",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}",
        ])
    };
    // A request that says so sends the schema as a forced tool's input.
    let server = Server::start(vec![tool_stream(), tool_stream()]).await;
    let tool = |s: &Value| Request {
        schema_as_tool: true,
        ..with_schema(s)
    };
    let p = provider(P::Anthropic, &server, "");
    let t = run(p.as_ref(), tool(&open_schema())).await;
    assert_eq!(t.error, None);
    assert_eq!(t.text, "{\"fruit\": [\"apple\"]}");
    assert_eq!(t.finish, Some(FinishReason::Stop));
    assert_eq!(t.raw_reason.as_deref(), Some("tool_use"));
    run(p.as_ref(), tool(&closed_schema())).await;
    let reqs = server.requests();
    let open_name = structured::schema_name(&open_schema());
    let a = reqs[0].json();
    assert_eq!(a["tools"][0]["name"], json!(open_name));
    assert_eq!(a["tools"][0]["input_schema"], open_schema());
    assert_eq!(a["tool_choice"], json!({"type": "tool", "name": open_name}));
    assert!(a.get("output_config").is_none());
    let b = reqs[1].json();
    assert_eq!(b["tools"][0]["input_schema"], closed_schema());
    assert_eq!(b["tool_choice"], json!({"type": "tool", "name": "Fruit_list"}));

    // Without it, `output_config.format`.
    let ep = config::endpoint(&cfg(P::Anthropic, &server, ""), &env).unwrap();
    let a = Anthropic::new(ep);
    assert!(a.body(&with_schema(&open_schema())).get("output_config").is_some());
}

#[tokio::test]
async fn anthropic_error_event_mid_stream_keeps_the_text() {
    let server = Server::start(vec![Reply::sse(&[
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"partial\"}}",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
    ])])
    .await;
    let t = run(provider(P::Anthropic, &server, "").as_ref(), req("x")).await;
    assert_eq!(t.text, "partial");
    assert_eq!(t.finish, Some(FinishReason::Error));
    let e = t.error.unwrap();
    assert_eq!(e.kind, ErrorKind::RateLimited);
    assert!(e.message.contains("overloaded_error: Overloaded"), "{}", e.message);
}

#[tokio::test]
async fn anthropic_529_is_retried() {
    let server = Server::start(vec![
        Reply::status(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
        P::Anthropic.ok(),
    ])
    .await;
    let t = run(provider(P::Anthropic, &server, "").as_ref(), req("x")).await;
    assert_ok_hi(&t);
    assert_eq!(server.requests().len(), 2);
}

// ---------------------------------------------------------------- Gemini

#[tokio::test]
async fn gemini_request_and_truncated_stream() {
    let server = Server::start(vec![Reply::data(&[
        r#"{"candidates":[{"content":{"parts":[{"text":"[\"apple\","}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3,"totalTokenCount":12},"modelVersion":"m-test"}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"thinking…","thought":true}],"role":"model"},"index":0}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":" \"pe"}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":5,"totalTokenCount":14},"modelVersion":"m-test"}"#,
    ])])
    .await;
    let p = provider(P::Gemini, &server, "");
    let t = run(p.as_ref(), full_req()).await;
    let r = server.only_request();
    assert_eq!(r.path, "/v1beta/models/m-test:streamGenerateContent?alt=sse");
    assert_eq!(r.header("x-goog-api-key"), Some(KEY));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(
        r.json(),
        json!({
            "contents": [{"role": "user", "parts": [{"text": "apples and pears"}]}],
            "systemInstruction": {"parts": [{"text": "Extract fruit."}]},
            "generationConfig": {"maxOutputTokens": 5, "temperature": 0.0, "stopSequences": ["\n\n"]}
        })
    );
    assert_eq!(t.error, None);
    assert_eq!(t.text, "[\"apple\", \"pe");
    assert_eq!(t.finish, Some(FinishReason::Length));
    assert_eq!(t.raw_reason.as_deref(), Some("MAX_TOKENS"));
    assert_eq!(
        t.usage,
        Usage {
            prompt_tokens: Some(9),
            completion_tokens: Some(5),
            ..Default::default()
        }
    );
}

#[tokio::test]
async fn gemini_structured_body_and_safety() {
    use cutline::llm::gemini::finish_reason;
    for r in ["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST"] {
        assert_eq!(finish_reason(r), FinishReason::ContentFilter, "{r}");
    }
    assert_eq!(finish_reason("STOP"), FinishReason::Stop);
    assert_eq!(finish_reason("MAX_TOKENS"), FinishReason::Length);
    let server = Server::start(vec![
        P::Gemini.ok(),
        Reply::data(&[r#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4}}"#]),
    ])
    .await;
    let p = provider(P::Gemini, &server, "");
    assert_ok_hi(&run(p.as_ref(), with_schema(&closed_schema())).await);
    let body = server.requests()[0].json();
    assert_eq!(
        body["generationConfig"],
        json!({
            "maxOutputTokens": 5, "temperature": 0.0, "stopSequences": ["\n\n"],
            "responseMimeType": "application/json", "responseJsonSchema": closed_schema()
        })
    );
    let blocked = run(p.as_ref(), req("x")).await;
    assert_eq!(blocked.finish, Some(FinishReason::ContentFilter));
    assert_eq!(blocked.raw_reason.as_deref(), Some("SAFETY"));
    assert_eq!(blocked.text, "");
}

#[tokio::test]
async fn gemini_bad_key_400_is_an_auth_error() {
    let server = Server::start(vec![Reply::status(
        400,
        r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}"#,
    )])
    .await;
    let t = run(provider(P::Gemini, &server, "").as_ref(), req("x")).await;
    let e = t.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Auth);
    assert!(e.message.contains(ENV), "{}", e.message);
    assert_eq!(server.requests().len(), 1);
}

// ---------------------------------------------------------------- Ollama

#[tokio::test]
async fn ollama_request_and_truncated_stream() {
    let server = Server::start(vec![Reply::ndjson(&[
        r#"{"model":"m-test","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"[\"apple"},"done":false}"#,
        r#"{"model":"m-test","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"\", \"pe"},"done":false}"#,
        r#"{"model":"m-test","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":5,"load_duration":1,"prompt_eval_count":14,"eval_count":5,"eval_duration":3}"#,
    ])])
    .await;
    let text = format!(
        "[[provider]]\nname = \"o\"\nkind = \"ollama\"\nbase_url = \"{}\"\nmodel = \"m-test\"\n",
        server.url()
    );
    let c = config::parse(&text, Path::new("x.toml")).unwrap().remove(0);
    let p = config::build_with_env(&c, &no_env).unwrap();
    let t = run(p.as_ref(), full_req()).await;
    let r = server.only_request();
    assert_eq!(r.path, "/api/chat");
    assert_eq!(r.header("authorization"), None);
    assert_eq!(
        r.json(),
        json!({
            "model": "m-test",
            "messages": [
                {"role": "system", "content": "Extract fruit."},
                {"role": "user", "content": "apples and pears"}
            ],
            "stream": true,
            "options": {"num_predict": 5, "temperature": 0.0, "stop": ["\n\n"]}
        })
    );
    assert_eq!(t.error, None);
    assert_eq!(t.text, "[\"apple\", \"pe");
    assert_eq!(t.finish, Some(FinishReason::Length));
    assert_eq!(t.raw_reason.as_deref(), Some("length"));
    assert_eq!(
        t.usage,
        Usage {
            prompt_tokens: Some(14),
            completion_tokens: Some(5),
            ..Default::default()
        }
    );
}

#[tokio::test]
async fn ollama_structured_body_and_optional_key() {
    let server = Server::start(vec![P::Ollama.ok()]).await;
    let t = run(
        provider(P::Ollama, &server, "").as_ref(),
        Request {
            max_tokens: None,
            stop: Vec::new(),
            temperature: None,
            ..with_schema(&closed_schema())
        },
    )
    .await;
    assert_ok_hi(&t);
    let r = server.only_request();
    assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let body = r.json();
    assert_eq!(body["format"], closed_schema());
    assert!(body.get("options").is_none(), "{body}");
}

// ------------------------------------------------- llama-server (native)

#[tokio::test]
async fn llama_server_kind_uses_completion_with_config_defaults() {
    let server = Server::start(vec![Reply::data(&[
        r#"{"content":"Hi","tokens":[1],"stop":false}"#,
        r#"{"content":" there","tokens":[2],"stop":false}"#,
        r#"{"content":"","stop":true,"stop_type":"limit","tokens_evaluated":4,"tokens_predicted":2}"#,
    ])])
    .await;
    let text = format!(
        "[[provider]]\nname = \"ls\"\nkind = \"llama-server\"\nbase_url = \"{}\"\nmax_tokens = 2\ntemperature = 0.3\n",
        server.url()
    );
    let conf = config::parse(&text, Path::new("x.toml")).unwrap().remove(0);
    let t = Target::configured(
        std::sync::Arc::from(config::build_with_env(&conf, &no_env).unwrap()),
        &conf,
    );
    let (prompt, _) = cutline::prompt::load_toml("hi.toml", "prompt = \"Say hi\"\n").unwrap();
    let spec = cutline::run::Spec::new(prompt, serde_json::Map::new());
    let outcome = cutline::run::execute(&t, &spec, None, |_, _| {}).await.unwrap();
    let tr = outcome.record.transcript();
    assert_eq!(tr.text, "Hi there");
    assert!(tr.has_token_pieces());
    assert_eq!(tr.finish, Some(FinishReason::Length));
    let r = server.only_request();
    assert_eq!(r.path, "/completion");
    assert_eq!(r.json()["n_predict"], json!(2));
    assert_eq!(r.json()["temperature"], json!(0.3));
    assert_eq!(t.provider.info().name, "ls");
}

// -------------------------------------------------------------- Failures

#[tokio::test]
async fn rate_limit_honours_retry_after_then_succeeds_for_every_provider() {
    let mut tasks = Vec::new();
    for p in ALL {
        tasks.push(tokio::spawn(async move {
            let server = Server::start(vec![
                Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "1"),
                p.ok(),
            ])
            .await;
            let start = Instant::now();
            let t = run(provider(p, &server, "").as_ref(), req("x")).await;
            assert_ok_hi(&t);
            assert_eq!(server.requests().len(), 2, "{p:?}");
            assert!(start.elapsed() >= Duration::from_millis(950), "{p:?} did not wait");
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test]
async fn rate_limit_gives_up_after_the_bounded_retries() {
    let server = Server::start(vec![
        Reply::status(429, "{}").header("retry-after-ms", "10"),
        Reply::status(429, "{}").header("retry-after-ms", "10"),
        Reply::status(429, r#"{"error":{"message":"still limited"}}"#).header("retry-after-ms", "10"),
        P::OpenAi.ok(),
    ])
    .await;
    let t = run(provider(P::OpenAi, &server, "").as_ref(), req("x")).await;
    let e = t.error.unwrap();
    assert_eq!(e.kind, ErrorKind::RateLimited);
    assert_eq!(e.status, Some(429));
    assert!(e.message.contains("still limited"), "{}", e.message);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn server_error_is_retried_for_every_provider() {
    for p in ALL {
        let server = Server::start(vec![Reply::status(500, r#"{"error":"boom"}"#), p.ok()]).await;
        let t = run(provider(p, &server, "").as_ref(), req("x")).await;
        assert_ok_hi(&t);
        assert_eq!(server.requests().len(), 2, "{p:?}");
        let r = &server.requests()[1];
        assert_eq!(r.path, p.path(), "{p:?}");
        let (h, v) = p.auth();
        assert_eq!(r.header(h), Some(v.as_str()), "{p:?}");
    }
}

#[tokio::test]
async fn unauthorized_is_not_retried_names_the_variable_and_hides_the_key() {
    for p in ALL {
        let server = Server::start(vec![p.unauthorized(), p.ok()]).await;
        let prov = provider(p, &server, "");
        let t = run(prov.as_ref(), req("x")).await;
        assert_eq!(server.requests().len(), 1, "{p:?} retried a 401");
        assert_eq!(t.finish, Some(FinishReason::Error));
        let e = t.error.clone().unwrap();
        assert_eq!(e.kind, ErrorKind::Auth, "{p:?}");
        assert_eq!(e.status, Some(401));
        assert!(e.message.contains(ENV), "{p:?}: {}", e.message);
        for shown in [
            e.message.clone(),
            e.to_string(),
            format!("{e:?}"),
            format!("{t:?}"),
            serde_json::to_string(&t).unwrap(),
        ] {
            assert!(!shown.contains(KEY), "{p:?} leaked the key: {shown}");
            assert!(!shown.contains("Zq8V"), "{p:?} leaked part of the key: {shown}");
        }
    }
}

#[tokio::test]
async fn context_length_errors_are_classified() {
    let cases = [
        (
            P::OpenAi,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ),
        (
            P::Anthropic,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
        ),
        (
            P::Gemini,
            r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
        ),
        (
            P::Compat,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#,
        ),
        (P::Ollama, r#"{"error":"the input length exceeds the context length"}"#),
    ];
    for (p, body) in cases {
        let server = Server::start(vec![Reply::status(400, body), p.ok()]).await;
        let t = run(provider(p, &server, "").as_ref(), req("x")).await;
        let e = t.error.unwrap();
        assert_eq!(e.kind, ErrorKind::ContextLength, "{p:?}: {}", e.message);
        assert_eq!(e.status, Some(400));
        assert_eq!(server.requests().len(), 1, "{p:?}");
    }
    // llama-server's native endpoint says the same.
    let server = Server::start(vec![Reply::status(
        400,
        r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
    )])
    .await;
    let text = format!(
        "[[provider]]\nname = \"ls\"\nkind = \"llama-server\"\nbase_url = \"{}\"\n",
        server.url()
    );
    let c = config::parse(&text, Path::new("x.toml")).unwrap().remove(0);
    let t = run(config::build_with_env(&c, &no_env).unwrap().as_ref(), req("x")).await;
    assert_eq!(t.error.unwrap().kind, ErrorKind::ContextLength);
}

#[tokio::test]
async fn a_stream_cut_midway_keeps_the_partial_text_and_ends_in_error() {
    for p in ALL {
        let server = Server::start(vec![p.cut()]).await;
        let t = run(provider(p, &server, "").as_ref(), req("x")).await;
        assert_eq!(t.text, "Half", "{p:?}");
        assert_eq!(t.finish, Some(FinishReason::Error), "{p:?}");
        let e = t.error.unwrap();
        assert_eq!(e.kind, ErrorKind::Stream, "{p:?}: {}", e.message);
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn a_body_that_ends_early_without_a_finish_is_an_error() {
    // A clean end of body (no transport error) before the model finished.
    let server = Server::start(vec![Reply::data(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Half"},"finish_reason":null}]}"#,
    ])])
    .await;
    let t = run(provider(P::OpenAi, &server, "").as_ref(), req("x")).await;
    assert_eq!(t.text, "Half");
    let e = t.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Stream);
    assert!(e.message.contains("partial output is kept"), "{}", e.message);
}

#[tokio::test]
async fn malformed_events_are_errors_not_panics() {
    let replies = |p: P| match p {
        P::Ollama => Reply::ndjson(&[r#"{"message":{"content":"ok "},"done":false}"#, "{not json"]),
        P::Anthropic => Reply::sse(&[
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok \"}}",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",",
        ]),
        P::Gemini => Reply::data(&[
            r#"{"candidates":[{"content":{"parts":[{"text":"ok "}]}}]}"#,
            r#"{"candidates": [oops"#,
        ]),
        _ => Reply::data(&[
            r#"{"choices":[{"index":0,"delta":{"content":"ok "},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta""#,
        ]),
    };
    for p in ALL {
        let server = Server::start(vec![replies(p)]).await;
        let t = run(provider(p, &server, "").as_ref(), req("x")).await;
        assert_eq!(t.text, "ok ", "{p:?}");
        let e = t.error.unwrap();
        assert_eq!(e.kind, ErrorKind::Stream, "{p:?}");
        assert!(e.message.starts_with("unreadable event"), "{p:?}: {}", e.message);
    }
    // Not UTF-8 at all.
    let mut bad = Reply::data(&["x"]);
    bad.chunks = vec![(Duration::ZERO, b"data: \xff\xfe\n\n".to_vec())];
    let server = Server::start(vec![bad]).await;
    let t = run(provider(P::OpenAi, &server, "").as_ref(), req("x")).await;
    assert_eq!(t.finish, Some(FinishReason::Error));
}

#[tokio::test]
async fn a_silent_stream_hits_the_idle_timeout_and_keeps_the_text() {
    let server = Server::start(vec![
        Reply::data(&[
            r#"{"choices":[{"index":0,"delta":{"content":"Par"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"tial"},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ])
        // Far past the idle timeout: had the client waited for it, the text
        // would end "Partial" (an outcome, not a timed assertion).
        .delay_before(1, 120_000),
    ])
    .await;
    let t = run(
        provider(P::OpenAi, &server, "idle_timeout_secs = 0.3").as_ref(),
        req("x"),
    )
    .await;
    assert_eq!(t.text, "Par");
    assert_eq!(t.finish, Some(FinishReason::Error));
    assert_eq!(t.error.unwrap().kind, ErrorKind::Timeout);
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let text = format!(
        "[[provider]]\nname = \"o\"\nkind = \"ollama\"\nbase_url = \"http://127.0.0.1:{port}\"\nmodel = \"m\"\n"
    );
    let c = config::parse(&text, Path::new("x.toml")).unwrap().remove(0);
    let t = run(config::build_with_env(&c, &no_env).unwrap().as_ref(), req("x")).await;
    assert_eq!(t.error.unwrap().kind, ErrorKind::Connect);
}

// ------------------------------------------------------------ Key safety

#[tokio::test]
async fn the_key_appears_in_no_debug_info_or_error() {
    let server = Server::start(Vec::new()).await;
    let mut shown = Vec::new();
    for p in ALL {
        let c = cfg(p, &server, "headers = { \"X-Secret-Header\" = \"hdr-value-123\" }");
        shown.push(format!("{c:?}"));
        shown.push(serde_json::to_string(&c).unwrap());
        let ep = config::endpoint(&c, &env).unwrap();
        shown.push(format!("{ep:?}"));
        assert!(format!("{ep:?}").contains(ENV), "the Debug names the variable");
        let prov = config::build_with_env(&c, &env).unwrap();
        shown.push(format!("{:?}", prov.info()));
        shown.push(serde_json::to_string(&prov.info()).unwrap());
        match p {
            P::OpenAi => shown.push(format!("{:?}", OpenAi::new(ep))),
            P::Compat => shown.push(format!("{:?}", OpenAi::compatible(ep))),
            P::Anthropic => shown.push(format!("{:?}", Anthropic::new(ep))),
            P::Gemini => shown.push(format!("{:?}", Gemini::new(ep))),
            P::Ollama => shown.push(format!("{:?}", Ollama::new(ep))),
        }
    }
    for s in &shown {
        assert!(!s.contains(KEY), "key leaked: {s}");
        assert!(!s.contains("hdr-value-123"), "header value leaked: {s}");
    }
}

#[tokio::test]
async fn a_missing_key_variable_is_named() {
    let server = Server::start(Vec::new()).await;
    for p in [P::OpenAi, P::Anthropic, P::Gemini] {
        let e = config::build_with_env(&cfg(p, &server, ""), &no_env)
            .err()
            .expect("a missing key fails");
        assert_eq!(e.kind, ErrorKind::Auth);
        assert!(e.message.contains(ENV), "{}", e.message);
        assert!(e.message.contains("test.toml:1:1"), "{}", e.message);
    }
    // The kind's default variable when the config names none.
    let mut c = ProviderConfig::new("a", Kind::Anthropic);
    c.model = Some("m".into());
    let e = config::build_with_env(&c, &no_env).err().unwrap();
    assert!(e.message.contains("ANTHROPIC_API_KEY"), "{}", e.message);
    let e = config::build_with_env(&c, &|_| Some("  ".into())).err().unwrap();
    assert!(e.message.contains("is empty"), "{}", e.message);
}

// ---------------------------------------------------------------- Config

#[test]
fn config_parses_every_field_and_tolerates_other_tables() {
    let text = r#"
[keys]
run = "ctrl-r"

[[provider]]
name = "gpt"
kind = "openai"
model = "gpt-4o-mini"
max_tokens = 1024
temperature = 0.2
headers = { "OpenAI-Organization" = "org-1" }
structured = "native"

[[provider]]
name = "claude"
kind = "anthropic"
model = "claude-sonnet-4-5"
api_key_env = "MY_CLAUDE_KEY"
structured_via = "tool"
max_retries = 0
idle_timeout_secs = 5

[[provider]]
name = "box"
kind = "llama_server"
"#;
    let ps = config::parse(text, Path::new("cutline.toml")).unwrap();
    assert_eq!(ps.len(), 3);
    let gpt = &ps[0];
    assert_eq!(gpt.kind, Kind::Openai);
    assert_eq!(gpt.key_env(), Some("OPENAI_API_KEY"));
    assert_eq!(gpt.temperature, Some(0.2));
    assert_eq!(gpt.structured, Mode::Native);
    assert_eq!(gpt.headers.get("openai-organization"), Some("org-1"));
    assert_eq!(gpt.origin.as_deref(), Some("cutline.toml:5:1"));
    let claude = &ps[1];
    assert_eq!(claude.key_env(), Some("MY_CLAUDE_KEY"));
    assert_eq!(claude.structured_via, Some(cutline::llm::anthropic::Via::Tool));
    assert_eq!(claude.retry_policy().attempts, 1);
    assert_eq!(claude.timeouts().idle, Duration::from_secs(5));
    assert_eq!(ps[2].kind, Kind::LlamaServer);
    // An explicit base URL wins; the kind's default otherwise.
    let ep = config::endpoint(gpt, &|_| Some("k".into())).unwrap();
    assert_eq!(ep.base_url, "https://api.openai.com/v1");
}

#[test]
fn config_errors_name_file_line_and_column() {
    let cases = [
        (
            "[[provider]]\nname = \"a\"\nkind = \"gpt\"\n",
            "bad.toml:3:",
            "unknown variant",
        ),
        (
            "[[provider]]\nname = \"a\"\nkind = \"openai\"\n",
            "bad.toml:1:1:",
            "needs a `model`",
        ),
        (
            "[[provider]]\nname = \"a\"\nkind = \"openai\"\nmodel = \"m\"\nmax_tokens = -3\n",
            "bad.toml:5:",
            "",
        ),
        (
            "[[provider]]\nname = \"a\"\nkind = \"openai\"\nmodel = \"m\"\ntypo = 1\n",
            "bad.toml:5:",
            "unknown field",
        ),
        ("[[provider]\n", "bad.toml:1:", ""),
        (
            "[[provider]]\nname = \"a\"\nkind = \"openai-compatible\"\nmodel = \"m\"\n",
            "bad.toml:1:1:",
            "needs a `base_url`",
        ),
        (
            "[[provider]]\nname = \"a\"\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"ftp://x\"\n",
            "bad.toml:5:",
            "http",
        ),
        (
            "[[provider]]\nname = \"a\"\nkind = \"gemini\"\nmodel = \"m\"\nstructured_via = \"tool\"\n",
            "bad.toml:5:",
            "anthropic only",
        ),
        (
            "[[provider]]\nname = \"a\"\nkind = \"ollama\"\nmodel = \"m\"\n\n[[provider]]\nname = \"a\"\nkind = \"ollama\"\nmodel = \"n\"\n",
            "bad.toml:7:",
            "defined twice",
        ),
        (
            "[[provider]]\nname = \"a\"\nkind = \"local\"\napi_key_env = \"K\"\n",
            "bad.toml:1:1:",
            "`api_key_env` is not supported for kind local",
        ),
    ];
    for (text, at, what) in cases {
        let e = config::parse(text, Path::new("bad.toml")).unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with(at), "{s:?} should start with {at:?}");
        assert!(s.contains(what), "{s:?} should mention {what:?}");
    }
}

#[test]
fn config_refuses_a_key_in_the_file_without_echoing_it() {
    let text = format!("[[provider]]\nname = \"a\"\nkind = \"openai\"\nmodel = \"m\"\napi_key = \"{KEY}\"\n");
    let e = config::parse(&text, Path::new("c.toml")).unwrap_err();
    let s = format!("{e} {e:?}");
    assert!(s.starts_with("c.toml:5:"), "{s}");
    assert!(s.contains("api_key_env"), "{s}");
    assert!(!s.contains(KEY), "{s}");
    let text = format!("[[provider]]\nname = \"a\"\nkind = \"openai\"\nmodel = \"m\"\napi_key_env = \"{KEY}\"\n");
    let e = config::parse(&text, Path::new("c.toml")).unwrap_err();
    let s = format!("{e} {e:?}");
    assert!(s.contains("NAME of an environment variable"), "{s}");
    assert!(!s.contains(KEY), "{s}");
    // A syntax error on a line holding a key does not quote the line.
    let text = format!("[[provider]]\nname = \"a\"\nheaders = {{ Authorization = \"Bearer {KEY}\" \n");
    let e = config::parse(&text, Path::new("c.toml")).unwrap_err();
    assert!(!format!("{e} {e:?}").contains(KEY));
}

#[test]
fn project_config_overrides_user_config_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config.toml");
    let project = dir.path().join("cutline.toml");
    std::fs::write(
        &user,
        "[[provider]]\nname = \"a\"\nkind = \"openai\"\nmodel = \"gpt-user\"\n\n[[provider]]\nname = \"b\"\nkind = \"ollama\"\nmodel = \"llama\"\n",
    )
    .unwrap();
    std::fs::write(
        &project,
        "[[provider]]\nname = \"a\"\nkind = \"openai\"\nmodel = \"gpt-project\"\n\n[[provider]]\nname = \"c\"\nkind = \"gemini\"\nmodel = \"g\"\n",
    )
    .unwrap();
    let missing = dir.path().join("nope.toml");
    let cfg = Config::load_from(&[missing, user, project.clone()]).unwrap();
    let names: Vec<&str> = cfg.providers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(cfg.get("a").unwrap().model.as_deref(), Some("gpt-project"));
    assert!(
        cfg.get("a")
            .unwrap()
            .origin
            .as_deref()
            .unwrap()
            .ends_with("cutline.toml:1:1")
    );
    assert_eq!(cfg.get("b").unwrap().model.as_deref(), Some("llama"));
    std::fs::write(&project, "[[provider]]\nname = 3\n").unwrap();
    let e = Config::load_from(std::slice::from_ref(&project)).unwrap_err();
    assert!(e.to_string().starts_with(&format!("{}:2:", project.display())), "{e}");
}

#[test]
fn replay_is_not_built_from_config() {
    let c = ProviderConfig::new("r", Kind::Replay);
    let e = config::build_with_env(&c, &no_env).err().unwrap();
    assert!(e.message.contains("--provider replay"), "{}", e.message);
}

// ------------------------------------------- the real llama-server (/v1)

/// Stops the local server however the test ends.
struct StopLocal;

impl Drop for StopLocal {
    fn drop(&mut self) {
        llm::local::shutdown();
    }
}

/// The OpenAI-compatible path against the real llama-server and Gemma 3
/// 270M: a cut at the token limit, and `response_format` in the wrapped
/// shape honoured (the output is constrained to the schema). Skipped when
/// the local model is not installed, unless `CUTLINE_REQUIRE_LOCAL` is set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_llama_server_openai_endpoint() {
    if let Err(e) = llm::local::installed() {
        assert!(
            std::env::var_os("CUTLINE_REQUIRE_LOCAL").is_none(),
            "CUTLINE_REQUIRE_LOCAL is set but {e}"
        );
        eprintln!("skipped: {e}");
        return;
    }
    let _stop = StopLocal;
    let url = llm::local::ensure_started().await.expect("llama-server starts");
    let text = format!(
        "[[provider]]\nname = \"ls-v1\"\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\nmodel = \"gemma-3-270m\"\n"
    );
    let c = config::parse(&text, Path::new("x.toml")).unwrap().remove(0);
    let p = config::build_with_env(&c, &no_env).unwrap();

    let cut = run(
        p.as_ref(),
        Request {
            prompt: "Fruit: apple, pear, plum, fig, lime, date.\nThe same fruit, one per line:\n".into(),
            max_tokens: Some(4),
            temperature: Some(0.0),
            ..Request::default()
        },
    )
    .await;
    assert_eq!(cut.error, None);
    assert_eq!(cut.finish, Some(FinishReason::Length));
    assert_eq!(cut.usage.completion_tokens, Some(4));
    assert!(!cut.text.is_empty());

    // A schema the model would never follow by chance: only the wrapped
    // `response_format` makes it answer `{"zzq": "ok"}`.
    let schema = json!({
        "type": "object",
        "properties": {"zzq": {"type": "string", "enum": ["ok"]}},
        "required": ["zzq"],
        "additionalProperties": false
    });
    let t = run(
        p.as_ref(),
        Request {
            prompt: "Return a JSON object with the key name set to Bob.".into(),
            max_tokens: Some(60),
            temperature: Some(0.0),
            response_schema: Some(schema.clone()),
            ..Request::default()
        },
    )
    .await;
    assert_eq!(t.error, None);
    assert_eq!(t.finish, Some(FinishReason::Stop), "{:?}", t.text);
    let parsed = structured::check(&t.text, &schema).expect("the output follows the schema");
    assert_eq!(parsed, json!({"zzq": "ok"}));
}

#[tokio::test]
async fn a_drop_after_the_finish_reason_keeps_the_finish() {
    let server = Server::start(vec![
        Reply::data(&[
            r#"{"choices":[{"index":0,"delta":{"content":"Done"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ])
        .cut(),
    ])
    .await;
    let t = run(provider(P::OpenAi, &server, "").as_ref(), req("x")).await;
    assert_eq!(t.error, None);
    assert_eq!(t.text, "Done");
    assert_eq!(t.finish, Some(FinishReason::Stop));
}

// ------------------------------------------------- reasoning and thinking

#[tokio::test]
async fn anthropic_extended_thinking_is_sent_kept_apart_and_counted() {
    let server = Server::start(vec![Reply::sse(&[
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m-test\",\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"The user wants fruit. Apples are fruit.\"}}",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM\"}}",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"apple\"}}",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":40}}",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}",
    ])])
    .await;
    let p = provider(P::Anthropic, &server, "");
    let t = run(
        p.as_ref(),
        Request {
            max_tokens: Some(2048),
            temperature: None,
            thinking: Some(Thinking::Budget { tokens: 1024 }),
            ..full_req()
        },
    )
    .await;
    let body = server.only_request().json();
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 1024}));
    assert_eq!(t.text, "apple");
    assert_eq!(t.thinking, "The user wants fruit. Apples are fruit.");
    assert_eq!(t.usage.completion_tokens, Some(40));
    // Nine o200k tokens in the thinking text; Anthropic counts it only
    // inside `output_tokens`, so the figure is an estimate and says so.
    assert_eq!(t.usage.reasoning_tokens, Some(9));
    assert!(t.usage.reasoning_estimated);
    assert_eq!(t.usage.answer_tokens(), Some(31));
}

#[tokio::test]
async fn openai_compatible_reasoning_content_is_thinking_not_answer() {
    let server = Server::start(vec![Reply::data(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Count the fruit."},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"apple"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":7,"completion_tokens_details":{"reasoning_tokens":6}}}"#,
        "[DONE]",
    ])])
    .await;
    let t = run(provider(P::Compat, &server, "").as_ref(), full_req()).await;
    assert_eq!(t.text, "apple");
    assert_eq!(t.thinking, "Count the fruit.");
    assert_eq!(t.usage.reasoning_tokens, Some(6));
    assert!(!t.usage.reasoning_estimated);
    assert_eq!(t.finish, Some(FinishReason::Length));
}

#[tokio::test]
async fn ollama_think_streams_thinking_apart_from_the_answer() {
    let server = Server::start(vec![Reply::ndjson(&[
        r#"{"model":"m-test","message":{"role":"assistant","content":"","thinking":"Fruit: apple."},"done":false}"#,
        r#"{"model":"m-test","message":{"role":"assistant","content":"apple"},"done":false}"#,
        r#"{"model":"m-test","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":3,"eval_count":9}"#,
    ])])
    .await;
    let t = run(
        provider(P::Ollama, &server, "").as_ref(),
        Request {
            thinking: Some(Thinking::Budget { tokens: 512 }),
            ..full_req()
        },
    )
    .await;
    assert_eq!(server.only_request().json()["think"], json!(true));
    assert_eq!(t.text, "apple");
    assert_eq!(t.thinking, "Fruit: apple.");
    assert_eq!(t.usage.completion_tokens, Some(9));
    assert!(t.usage.reasoning_estimated && t.usage.reasoning_tokens.is_some());
}

#[tokio::test]
async fn gemini_thinking_config_and_thought_parts() {
    let server = Server::start(vec![Reply::data(&[
        r#"{"candidates":[{"content":{"parts":[{"text":"Looking for fruit.","thought":true}],"role":"model"},"index":0}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}],"usageMetadata":{"promptTokenCount":3,"thoughtsTokenCount":5,"totalTokenCount":8}}"#,
    ])])
    .await;
    let t = run(
        provider(P::Gemini, &server, "").as_ref(),
        Request {
            thinking: Some(Thinking::Budget { tokens: 256 }),
            ..full_req()
        },
    )
    .await;
    let body = server.only_request().json();
    assert_eq!(
        body["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 256})
    );
    // The whole limit went to thinking: no visible text, cut by the limit.
    assert_eq!(t.text, "");
    assert_eq!(t.thinking, "Looking for fruit.");
    assert_eq!(t.finish, Some(FinishReason::Length));
    assert_eq!(t.usage.completion_tokens, Some(5));
    assert_eq!(t.usage.reasoning_tokens, Some(5));
}

#[tokio::test]
async fn llama_server_behind_api_key_gets_a_bearer_token() {
    let server = Server::start(vec![Reply::data(&[
        r#"{"content":"Hi","tokens":[1],"stop":false}"#,
        r#"{"content":"","stop":true,"stop_type":"eos","tokens_evaluated":4,"tokens_predicted":1}"#,
    ])])
    .await;
    let text = format!(
        "[[provider]]\nname = \"ls\"\nkind = \"llama-server\"\nbase_url = \"{}\"\napi_key_env = \"{ENV}\"\n",
        server.url()
    );
    let conf = config::parse(&text, Path::new("x.toml")).unwrap().remove(0);
    let p = config::build_with_env(&conf, &env).unwrap();
    let t = run(p.as_ref(), req("Say hi")).await;
    assert_eq!(t.text, "Hi");
    let r = server.only_request();
    assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert!(!format!("{p:?}", p = p.info()).contains(KEY));
}

#[test]
fn a_run_cut_with_nothing_visible_says_the_limit_went_to_reasoning() {
    let rec = cutline::session::RunRecord {
        kind: cutline::session::RecordKind::Run,
        run_id: "1".into(),
        started_ms: 0,
        prompt_id: "p".into(),
        response_type: cutline::prompt::ResponseType::Jsonl,
        prompt: json!({}),
        system: String::new(),
        rendered: String::new(),
        variables: serde_json::Map::new(),
        provider: cutline::llm::ProviderInfo {
            name: "o".into(),
            kind: "openai".into(),
            model: "gpt-5-mini".into(),
            base_url: None,
        },
        params: cutline::session::Params {
            max_tokens: Some(400),
            ..Default::default()
        },
        text: String::new(),
        thinking: String::new(),
        pieces: Vec::new(),
        finish: FinishReason::Length,
        raw_reason: Some("length".into()),
        usage: Usage {
            prompt_tokens: Some(50),
            completion_tokens: Some(400),
            reasoning_tokens: Some(400),
            reasoning_estimated: false,
            ..Usage::default()
        },
        error: None,
        first_token_ms: None,
        total_ms: 1,
        structured_path: cutline::llm::structured::Path::None,
        adjustments: Vec::new(),
        checks: Vec::new(),
        prefill: String::new(),
        token_ids: Vec::new(),
        continues: None,
        continuation_token: None,
        batch: None,
        analysis: json!({}),
    };
    assert_eq!(
        cutline::run::budget_note(&rec).as_deref(),
        Some("limit 400: 400 reasoning, 0 answer — the limit was spent on reasoning")
    );
}

/// Issue 32, case 25: an unknown stream event whose data is not JSON (a
/// `ping`) ended the run, though unknown events are documented as
/// ignored. On the chat and Anthropic wires it is skipped; the answer is
/// whole. (The Responses wire's is in `providers_now.rs`'s stream.)
#[tokio::test]
async fn an_unknown_event_with_data_that_is_not_json_is_ignored() {
    for p in [P::OpenAi, P::Anthropic] {
        let mut reply = p.ok();
        reply
            .chunks
            .insert(1, (Duration::ZERO, b"event: ping\ndata: ping\n\n".to_vec()));
        reply
            .chunks
            .insert(2, (Duration::ZERO, b"event: keepalive\ndata: \n\n".to_vec()));
        let server = Server::start(vec![reply]).await;
        let t = run(provider(p, &server, "").as_ref(), req("x")).await;
        assert_ok_hi(&t);
    }
    // An event of the wire's own that is not JSON is still a broken stream.
    let mut reply = P::Anthropic.ok();
    reply.chunks.insert(
        1,
        (Duration::ZERO, b"event: content_block_delta\ndata: ping\n\n".to_vec()),
    );
    let server = Server::start(vec![reply]).await;
    let t = run(provider(P::Anthropic, &server, "").as_ref(), req("x")).await;
    assert_eq!(
        t.error.map(|e| e.message),
        Some("unreadable event from Anthropic: ping".to_owned())
    );
}
