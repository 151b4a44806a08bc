//! The embedded default model: llama.cpp's `llama-server` with Gemma 3 270M,
//! installed by `cutline setup local` into the user's cache directory and
//! started by cutline itself on a loopback port the server picks.
//!
//! One server per process, started on first use and reused across runs; it
//! is stopped by [`shutdown`], which the CLI and TUI call on every exit path
//! (normal return, error, panic hook, Ctrl-C/SIGTERM). A `kill -9` of
//! cutline runs none of those, so a watchdog process (see [`watchdog`])
//! stops the server when cutline is gone, however it ended.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{ErrorKind, LlmError};

/// The setup command named whenever the local model is missing.
pub const SETUP_HINT: &str =
    "run `cutline setup local` (or scripts/setup-local.sh) to install llama-server and Gemma 3 270M";

/// Where the local model lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Install {
    /// The llama-server binary.
    pub server: PathBuf,
    /// The GGUF model file.
    pub model: PathBuf,
}

/// cutline's cache directory (`$XDG_CACHE_HOME/cutline` or `~/.cache/cutline`).
pub fn cache_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("cutline");
    }
    dirs::cache_dir().unwrap_or_else(std::env::temp_dir).join("cutline")
}

/// The install, from `CUTLINE_LLAMA_SERVER` / `CUTLINE_MODEL` or the cache.
pub fn install() -> Install {
    let cache = cache_dir();
    let server =
        std::env::var_os("CUTLINE_LLAMA_SERVER").map_or_else(|| cache.join("bin").join("llama-server"), PathBuf::from);
    let model = std::env::var_os("CUTLINE_MODEL")
        .map_or_else(|| cache.join("models").join("gemma-3-270m-q4_k_m.gguf"), PathBuf::from);
    Install { server, model }
}

/// The install if both files exist, else a `SetupRequired` error naming the
/// setup command.
pub fn installed() -> Result<Install, LlmError> {
    let i = install();
    for (what, p) in [("llama-server", &i.server), ("the Gemma 3 270M model", &i.model)] {
        if !p.is_file() {
            return Err(LlmError::new(
                ErrorKind::SetupRequired,
                format!(
                    "the local model is not installed ({what} not found at {}); {SETUP_HINT}",
                    p.display()
                ),
            ));
        }
    }
    Ok(i)
}

struct Running {
    child: Child,
    /// Holds the write end of its stdin pipe: closed when cutline ends.
    watchdog: Option<Child>,
    /// Where it listens, once its log has said: it binds a port of its own
    /// choosing (`--port 0`), so no other process can take the port
    /// between cutline picking it and the server binding it.
    url: Option<String>,
    /// Its log, removed when it is stopped.
    log: PathBuf,
}

impl Drop for Running {
    /// Stop the watchdog first (so it never signals a reused pid), then the
    /// server.
    fn drop(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The watchdog's script: block reading stdin, a pipe whose only writer is
/// cutline; the read returns when cutline ends (any way, `kill -9`
/// included), then stop the server `$1`: TERM, and KILL after 5 s; then
/// remove its log `$2`, as stopping a running server does. A server that
/// is already gone (a failed start) keeps its log.
const WATCHDOG: &str = r#"read -r line; kill -TERM "$1" 2>/dev/null || exit 0; i=0; while kill -0 "$1" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i+1)); done; kill -KILL "$1" 2>/dev/null; rm -f "$2""#;

/// Start the watchdog of server `pid`: a shell in its own process group (a
/// Ctrl-C meant for cutline does not end it) blocked on a pipe from this
/// process. A parent-death signal would need an `unsafe` `pre_exec` hook
/// and fires when the spawning *thread* ends; the pipe needs neither.
#[cfg(unix)]
fn watchdog(pid: u32, log: &std::path::Path) -> Option<Child> {
    use std::os::unix::process::CommandExt;
    Command::new("sh")
        .args(["-c", WATCHDOG, "cutline-watchdog", &pid.to_string()])
        .arg(log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()
}

#[cfg(not(unix))]
fn watchdog(_pid: u32, _log: &std::path::Path) -> Option<Child> {
    None
}

static SERVER: Mutex<Option<Running>> = Mutex::new(None);
static STARTING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// How long a starting server has to say where it listens and answer
/// `/health`.
const START_DEADLINE: Duration = Duration::from_secs(120);

/// The URL of the running local server, starting it if needed.
pub async fn ensure_started() -> Result<String, LlmError> {
    // Concurrent first uses (a twin run) must not see a server that is
    // still loading, nor start two: one caller starts it, the others wait.
    let _starting = STARTING.lock().await;
    if let ServerState::Listening(url) = server_state() {
        return Ok(url);
    }
    start(&installed()?).await
}

async fn start(inst: &Install) -> Result<String, LlmError> {
    // A start that was abandoned (a cancelled run) may have left a server
    // still loading: it goes first, so it cannot write its own port into
    // the new log.
    stop(false);
    let (log_path, log) = new_log()?;
    let mut cmd = Command::new(&inst.server);
    cmd.arg("-m")
        .arg(&inst.model)
        .args(["--host", "127.0.0.1", "--port", "0"])
        .args(["-c", "4096", "-np", "1", "--no-webui"])
        .stdin(Stdio::null());
    match log.try_clone() {
        Ok(f) => cmd.stdout(Stdio::from(f)),
        Err(_) => cmd.stdout(Stdio::null()),
    };
    cmd.stderr(Stdio::from(log));
    let child = cmd.spawn().map_err(|e| {
        LlmError::caused(
            ErrorKind::SetupRequired,
            format!("could not start {}: {e}; {SETUP_HINT}", inst.server.display()),
            e,
        )
    })?;
    let watchdog = watchdog(child.id(), &log_path);
    if let Ok(mut g) = SERVER.lock() {
        *g = Some(Running {
            child,
            watchdog,
            url: None,
            log: log_path.clone(),
        });
    }
    wait_healthy(&log_path).await
}

/// A fresh log for a server of this process (one per process, so
/// concurrent cutlines do not clobber each other's): in the cache's
/// `logs/`, else, when that cannot be written, the temp directory. Any
/// earlier file there is removed first, so the server's line in it is its
/// own.
fn new_log() -> Result<(PathBuf, std::fs::File), LlmError> {
    let name = format!("llama-server-{}.log", std::process::id());
    let create = |dir: PathBuf| {
        let path = dir.join(&name);
        std::fs::create_dir_all(&dir)?;
        let _ = std::fs::remove_file(&path);
        // A new file (never a link planted there: it is not followed).
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map(|f| (path, f))
    };
    let cached = cache_dir().join("logs");
    create(cached.clone())
        .or_else(|_| create(std::env::temp_dir().join("cutline-logs")))
        .map_err(|e| {
            LlmError::caused(
                ErrorKind::SetupRequired,
                format!(
                    "could not create llama-server's log in {} nor in the temp directory: {e}",
                    cached.display()
                ),
                e,
            )
        })
}

/// The server this process started, as it is now.
enum ServerState {
    /// Alive and listening at this URL.
    Listening(String),
    /// Alive, and its log has not yet said where it listens.
    Starting,
    /// It ended with this status (now forgotten, so the next use starts another).
    Exited(std::process::ExitStatus),
    /// None was started, or it was stopped.
    None,
}

fn server_state() -> ServerState {
    let Ok(mut g) = SERVER.lock() else {
        return ServerState::None;
    };
    let Some(r) = g.as_mut() else {
        return ServerState::None;
    };
    match r.child.try_wait() {
        Ok(None) => r.url.clone().map_or(ServerState::Starting, ServerState::Listening),
        Ok(Some(status)) => {
            *g = None;
            ServerState::Exited(status)
        }
        Err(_) => {
            *g = None;
            ServerState::None
        }
    }
}

/// Keep the URL the starting server's log gave.
fn set_url(url: &str) {
    if let Ok(mut g) = SERVER.lock()
        && let Some(r) = g.as_mut()
    {
        r.url = Some(url.to_owned());
    }
}

/// Where llama-server says it listens: its startup line, `… listening on
/// http://127.0.0.1:PORT` (older builds add ` - starting the main loop`).
fn listening_url(log: &str) -> Option<&str> {
    const MARK: &str = "listening on http://";
    let at = log.rfind(MARK)? + MARK.len() - "http://".len();
    let rest = &log[at..];
    // Only a whole line: the URL ends where whitespace begins.
    let url = &rest[..rest.find(char::is_whitespace)?];
    let port = url.rsplit_once(':')?.1;
    (!port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && port != "0").then_some(url)
}

/// Wait until the starting server has said where it listens and answers
/// `/health`; the URL, or why not (it exited, or the deadline passed), the
/// log named.
async fn wait_healthy(log: &std::path::Path) -> Result<String, LlmError> {
    let client = super::http::tls_ready(reqwest::Client::builder())
        .build()
        .unwrap_or_default();
    let deadline = Instant::now() + START_DEADLINE;
    loop {
        let url = match server_state() {
            ServerState::Listening(url) => Some(url),
            ServerState::Starting => {
                let text = std::fs::read(log).unwrap_or_default();
                let url = listening_url(&String::from_utf8_lossy(&text)).map(str::to_owned);
                if let Some(u) = &url {
                    set_url(u);
                }
                url
            }
            ServerState::Exited(status) => {
                return Err(LlmError::new(
                    ErrorKind::Connect,
                    format!("llama-server exited while starting ({status}); see {}", log.display()),
                ));
            }
            ServerState::None => {
                return Err(LlmError::new(
                    ErrorKind::Connect,
                    format!("llama-server stopped while starting; see {}", log.display()),
                ));
            }
        };
        if let Some(url) = url
            && let Ok(r) = client
                .get(format!("{url}/health"))
                .timeout(Duration::from_secs(2))
                .send()
                .await
            && r.status().is_success()
        {
            return Ok(url);
        }
        if Instant::now() > deadline {
            stop(false);
            return Err(LlmError::new(
                ErrorKind::Timeout,
                format!(
                    "llama-server did not become healthy in {}s; see {}",
                    START_DEADLINE.as_secs(),
                    log.display()
                ),
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Stop the local server if this process started one. Safe to call twice
/// and from a panic hook or signal handler.
pub fn shutdown() {
    stop(true);
}

/// Stop the server; stopping a running server removes this process's log,
/// while a failed start (the server gone or never healthy) keeps it for the
/// error message that names it.
fn stop(remove_log: bool) {
    let taken = match SERVER.lock() {
        Ok(mut g) => g.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    let log = taken.as_ref().map(|r| r.log.clone());
    drop(taken);
    if let (true, Some(log)) = (remove_log, log) {
        let _ = std::fs::remove_file(log);
    }
}

#[cfg(test)]
mod tests {
    use super::listening_url;

    #[test]
    fn the_port_the_server_took_is_read_from_its_log() {
        let current = "0.00.003 I srv  init: The UI is disabled\n0.01.444 I srv  llama_server: listening on http://127.0.0.1:42655\n";
        assert_eq!(listening_url(current), Some("http://127.0.0.1:42655"));
        let older = "main: server is listening on http://127.0.0.1:8080 - starting the main loop\n";
        assert_eq!(listening_url(older), Some("http://127.0.0.1:8080"));
    }

    #[test]
    fn no_url_until_the_line_is_whole() {
        assert_eq!(listening_url(""), None);
        assert_eq!(listening_url("loading model\n"), None);
        assert_eq!(listening_url("llama_server: listening on http://127.0.0.1:"), None);
        assert_eq!(listening_url("listening on http://127.0.0.1:0\n"), None);
        // A line still being written: the digits so far are not the port.
        assert_eq!(listening_url("llama_server: listening on http://127.0.0.1:426"), None);
    }
}
