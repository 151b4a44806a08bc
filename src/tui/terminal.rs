//! The terminal side of the workbench: entering and restoring the
//! terminal on every exit path (quit, error, panic hook, Ctrl-C, SIGINT,
//! SIGTERM, SIGHUP), the input, signal and clock threads, the external
//! editor's hand-over, and the event loop that feeds the reducer and
//! draws.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    self as ct, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::{Effect, Event, Keymap, State, TuiOptions, editor, initial_state, paste, runner, theme, update, view};

static UI_THREAD: OnceLock<std::thread::ThreadId> = OnceLock::new();

/// True while the terminal is in the workbench's modes (raw, alternate
/// screen, mouse capture).
static TERMINAL_ENTERED: AtomicBool = AtomicBool::new(false);

/// Exit code when a signal ended the workbench (128 + signal number).
static SIGNAL_EXIT: AtomicI32 = AtomicI32::new(0);

/// Put the terminal back: raw mode off, main screen, mouse released, cursor
/// shown. Safe to call more than once and from a panic hook.
pub fn restore_terminal() {
    // Only once: leaving the alternate screen a second time (the panic
    // hook, then the guard's drop while unwinding) restores the cursor
    // saved on entry again, and what was printed since is overwritten.
    if !TERMINAL_ENTERED.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    );
}

/// Restores the terminal when dropped (normal return and errors).
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> std::io::Result<Self> {
        enable_raw_mode()?;
        TERMINAL_ENTERED.store(true, Ordering::SeqCst);
        let guard = Self;
        enter_modes()?;
        Ok(guard)
    }
}

/// Raw mode on, alternate screen, mouse and bracketed paste: on start, and
/// again after the external editor had the terminal.
fn enter_modes() -> std::io::Result<()> {
    enable_raw_mode()?;
    TERMINAL_ENTERED.store(true, Ordering::SeqCst);
    execute!(
        std::io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )
}

/// Lets the event loop take the terminal from the input thread (for the
/// external editor): while `paused` the thread reads nothing and says so in
/// `idle`, so no key meant for the editor lands in the workbench.
#[derive(Default)]
struct InputGate {
    paused: AtomicBool,
    idle: AtomicBool,
}

/// Suspend the workbench, run the external editor on `text`, and take the
/// terminal back (redrawn in full on the next frame).
fn edit_externally(
    terminal: &mut Terminal<CrosstermBackend<std::io::Stdout>>,
    gate: &InputGate,
    text: &str,
    suffix: &str,
) -> std::io::Result<Result<String, editor::external::ExternalError>> {
    gate.idle.store(false, Ordering::SeqCst);
    gate.paused.store(true, Ordering::SeqCst);
    // The input thread polls in 100 ms steps: it is idle within one.
    let deadline = Instant::now() + Duration::from_millis(500);
    while !gate.idle.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    restore_terminal();
    let editor = editor::external::command();
    tracing::info!("external editor: {editor}");
    let result = editor::external::edit(&editor, text, suffix);
    let entered = enter_modes().and_then(|()| terminal.clear());
    gate.paused.store(false, Ordering::SeqCst);
    entered.map(|()| result)
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

fn install_panic_hook() {
    let _ = UI_THREAD.set(std::thread::current().id());
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tracing::error!("panic: {info}");
        // A panic in a background task is caught and reported as a failed
        // run; only the UI thread's panic ends the workbench.
        // Printing from another thread would garble the screen: the log has it.
        if UI_THREAD.get() == Some(&std::thread::current().id()) {
            restore_terminal();
            crate::llm::local::shutdown();
            prev(info);
            eprintln!(
                "cutline: the workbench panicked; log: {}",
                crate::logging::workbench_path().display()
            );
        }
    }));
}

/// Run the workbench until the person quits; returns the exit code (0, or
/// 128 + the signal that ended it, or 1 on an error). Stops the local model
/// on the way out.
#[allow(clippy::needless_pass_by_value, reason = "the CLI hands its options over")]
pub fn main(opts: TuiOptions) -> i32 {
    let _ = crate::logging::to_file(&crate::logging::workbench_path());
    tracing::info!("start: {opts:?}");
    let code = match run(&opts) {
        Ok(()) => SIGNAL_EXIT.load(Ordering::Relaxed),
        Err(e) => {
            restore_terminal();
            eprintln!("cutline: {e}");
            tracing::error!("{e}");
            1
        }
    };
    crate::llm::local::shutdown();
    tracing::info!("exit {code}");
    code
}

fn run(opts: &TuiOptions) -> std::io::Result<()> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(std::io::Error::other(
            "the workbench needs a terminal; for scripts use the headless subcommands (`cutline --help`)",
        ));
    }
    let (keymap, warnings) = Keymap::load_with(&super::registry::own_keys());
    let local = crate::llm::local::installed().is_ok();
    let mut state = initial_state(opts, keymap, theme::Theme::from_env(), local);
    if let Some(w) = warnings.first() {
        state.error(w.clone());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    install_panic_hook();
    let guard = TerminalGuard::enter()?;
    let result = {
        let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
        terminal.clear()?;
        rt.block_on(event_loop(&mut terminal, state, opts))
    };
    drop(guard);
    rt.shutdown_timeout(Duration::from_millis(300));
    result
}

fn spawn_input(tx: UnboundedSender<Event>, stop: Arc<AtomicBool>, gate: Arc<InputGate>) {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if gate.paused.load(Ordering::SeqCst) {
                gate.idle.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            match ct::poll(Duration::from_millis(100)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    tracing::error!("input: {e}");
                    let _ = tx.send(Event::Terminate);
                    return;
                }
            }
            let ev = match ct::read() {
                Ok(ct::Event::Key(k)) => Event::Key(k),
                Ok(ct::Event::Mouse(m)) => Event::Mouse(m),
                Ok(ct::Event::Resize(w, h)) => Event::Resize(w, h),
                Ok(ct::Event::Paste(text)) => Event::Paste(text),
                Ok(_) => continue,
                Err(e) => {
                    tracing::error!("input: {e}");
                    let _ = tx.send(Event::Terminate);
                    return;
                }
            };
            if tx.send(ev).is_err() {
                return;
            }
        }
    });
}

fn spawn_signals(tx: UnboundedSender<Event>) {
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        let (name, code) = tokio::select! {
            _ = term.recv() => ("SIGTERM", 143),
            _ = int.recv() => ("SIGINT", 130),
            _ = hup.recv() => ("SIGHUP", 129),
        };
        tracing::info!("{name}");
        SIGNAL_EXIT.store(code, Ordering::Relaxed);
        let _ = tx.send(Event::Terminate);
    });
    #[cfg(not(unix))]
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        SIGNAL_EXIT.store(130, Ordering::Relaxed);
        let _ = tx.send(Event::Terminate);
    });
}

/// Test-only: `CUTLINE_TEST_PANIC=after-first-frame` panics on the UI
/// thread right after the first frame is drawn, so the e2e tests can check
/// that a panic leaves the terminal restored (tests/tui_e2e.rs). Not a
/// feature; nothing else reads it.
fn test_panic_hook() {
    assert!(
        std::env::var_os("CUTLINE_TEST_PANIC").is_none_or(|v| v != "after-first-frame"),
        "CUTLINE_TEST_PANIC: injected panic after the first frame"
    );
}

/// The clock: a tick every 250 ms, so streaming runs' elapsed time moves.
fn spawn_ticks(tx: UnboundedSender<Event>, start: Instant) {
    tokio::spawn(async move {
        let mut iv = tokio::time::interval(Duration::from_millis(250));
        loop {
            iv.tick().await;
            let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
            if tx.send(Event::Tick(ms)).is_err() {
                return;
            }
        }
    });
}

/// Carry out a frame's effects: the external editor here (it needs the
/// terminal), the rest by the runner. False once one of them quits.
fn carry_out(
    effects: Vec<Effect>,
    terminal: &mut Terminal<CrosstermBackend<std::io::Stdout>>,
    gate: &InputGate,
    own_tx: &UnboundedSender<Event>,
    runner: &mut runner::Runner,
) -> std::io::Result<bool> {
    for e in effects {
        if let Effect::EditExternally { field, text, suffix } = e {
            let result = edit_externally(terminal, gate, &text, suffix)?;
            let _ = own_tx.send(Event::EditedExternally { field, result });
            continue;
        }
        if !runner.apply(e) {
            return Ok(false);
        }
    }
    Ok(true)
}

async fn event_loop(
    terminal: &mut Terminal<CrosstermBackend<std::io::Stdout>>,
    mut state: State,
    opts: &TuiOptions,
) -> std::io::Result<()> {
    let start = Instant::now();
    let (tx, mut rx) = unbounded_channel();
    // Signals have their own channel, read ahead of queued input.
    let (sig_tx, mut sig_rx) = unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let gate = Arc::new(InputGate::default());
    spawn_input(tx.clone(), stop.clone(), gate.clone());
    let own_tx = tx.clone();
    spawn_signals(sig_tx);
    spawn_ticks(tx.clone(), start);
    let mut runner = runner::Runner::new(tx, opts.workspace.clone(), opts.sessions_dir.clone(), start);
    let size = terminal.size()?;
    state.size = (size.width, size.height);
    runner.apply(Effect::LoadPrompts);
    runner.apply(Effect::LoadSessions);
    runner.apply(Effect::LoadProviders);
    runner.apply(Effect::LoadRemembered);
    // Each component's own work at start (its jobs).
    for c in super::COMPONENTS {
        for e in c.init(&state) {
            runner.apply(e);
        }
    }
    terminal.draw(|f| view::draw(f, &state))?;
    test_panic_hook();
    let result = loop {
        let ev = tokio::select! {
            biased;
            Some(sig) = sig_rx.recv() => sig,
            ev = rx.recv() => match ev {
                Some(ev) => ev,
                None => break Ok(()),
            },
        };
        // Coalesce a burst (a fast stream, typed keys) into one frame; a
        // signal that arrives meanwhile goes ahead of the rest, and a run
        // of typed keys is one insertion.
        let mut effects = Vec::new();
        let mut typed = paste::Typed::default();
        let mut next = Some(ev);
        let mut n = 0;
        while let Some(ev) = next.take() {
            if let Some(ev) = typed.take(&state, ev) {
                if let Some(t) = typed.flush() {
                    effects.extend(update(&mut state, t));
                }
                effects.extend(update(&mut state, ev));
            }
            n += 1;
            if n >= 2000 || state.quit {
                break;
            }
            next = match sig_rx.try_recv() {
                Ok(sig) => Some(sig),
                Err(_) => rx.try_recv().ok(),
            };
        }
        if let Some(t) = typed.flush() {
            effects.extend(update(&mut state, t));
        }
        match carry_out(effects, terminal, &gate, &own_tx, &mut runner) {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
        if state.quit {
            break Ok(());
        }
        if let Err(e) = terminal.draw(|f| view::draw(f, &state)) {
            break Err(e);
        }
    };
    stop.store(true, Ordering::Relaxed);
    runner.abort_all();
    result
}
