//! The embedded default model: llama.cpp's `llama-server` with Gemma 3 270M,
//! installed by `cutline setup local` into the user's cache directory and
//! started by cutline itself on a free loopback port.
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
    url: String,
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

fn free_port() -> std::io::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// The URL of the running local server, starting it if needed.
pub async fn ensure_started() -> Result<String, LlmError> {
    // Concurrent first uses (a twin run) must not see a server that is
    // still loading, nor start two: one caller starts it, the others wait.
    let _starting = STARTING.lock().await;
    if let Some(url) = running_url() {
        return Ok(url);
    }
    let inst = installed()?;
    // The free port is released before llama-server binds it, so another
    // process can take it in between: try a few ports before giving up.
    let mut last = None;
    for _ in 0..3 {
        match start_once(&inst).await {
            Ok(url) => return Ok(url),
            Err(e) if e.kind == ErrorKind::Connect => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| LlmError::new(ErrorKind::Connect, "llama-server did not start")))
}

async fn start_once(inst: &Install) -> Result<String, LlmError> {
    let port = free_port().map_err(|e| LlmError::new(ErrorKind::Connect, format!("no free loopback port: {e}")))?;
    // One log per process, so concurrent cutlines do not clobber each other's.
    let log_dir = cache_dir().join("logs");
    let _ = std::fs::create_dir_all(&log_dir);
    let log_path = log_dir.join(format!("llama-server-{}.log", std::process::id()));
    let log = std::fs::File::create(&log_path).ok();
    let mut cmd = Command::new(&inst.server);
    cmd.arg("-m")
        .arg(&inst.model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", "4096", "-np", "1", "--no-webui"])
        .stdin(Stdio::null());
    match log.as_ref().and_then(|f| f.try_clone().ok()) {
        Some(f) => {
            cmd.stdout(Stdio::from(f));
        }
        None => {
            cmd.stdout(Stdio::null());
        }
    }
    match log {
        Some(f) => cmd.stderr(Stdio::from(f)),
        None => cmd.stderr(Stdio::null()),
    };
    let child = cmd.spawn().map_err(|e| {
        LlmError::new(
            ErrorKind::SetupRequired,
            format!("could not start {}: {e}; {SETUP_HINT}", inst.server.display()),
        )
    })?;
    let url = format!("http://127.0.0.1:{port}");
    let watchdog = watchdog(child.id(), &log_path);
    if let Ok(mut g) = SERVER.lock() {
        *g = Some(Running {
            child,
            watchdog,
            url: url.clone(),
        });
    }
    wait_healthy(&url, &log_path).await?;
    Ok(url)
}

fn running_url() -> Option<String> {
    match server_state() {
        ServerState::Running(url) => Some(url),
        ServerState::Exited(_) | ServerState::None => None,
    }
}

/// The server this process started, as it is now.
enum ServerState {
    /// Alive at this URL.
    Running(String),
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
        Ok(None) => ServerState::Running(r.url.clone()),
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

async fn wait_healthy(url: &str, log: &std::path::Path) -> Result<(), LlmError> {
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match server_state() {
            ServerState::Running(_) => {}
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
        }
        if let Ok(r) = client
            .get(format!("{url}/health"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            && r.status().is_success()
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            stop(false);
            return Err(LlmError::new(
                ErrorKind::Timeout,
                format!("llama-server did not become healthy in 120s; see {}", log.display()),
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
    let was_running = taken.is_some();
    drop(taken);
    if remove_log && was_running {
        let _ = std::fs::remove_file(
            cache_dir()
                .join("logs")
                .join(format!("llama-server-{}.log", std::process::id())),
        );
    }
}
