//! Every file cutline reads is opened here. Only a regular file is ever
//! read: its type is checked before it is opened, and it is opened
//! non-blocking, so a FIFO or a device (a stray `mkfifo sessions/x.jsonl`)
//! is an error at once, never a read that waits forever. The files read
//! whole (prompt configs, session files) are bounded too: a file over the
//! cap is an error that names its size, so a stray huge file, or a link to
//! `/proc/self/pagemap`, can never be read until the machine runs out of
//! memory.
//!
//! Every file cutline writes is opened or replaced here too, and only in
//! place of a regular file: a symbolic link is refused, never written
//! through (an outside file it points to would be appended to, or cut as
//! "torn") nor replaced by a regular file (the linked file would silently
//! never get the edit). The error names the link and where it points.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The environment variable that sets the cap, in MiB.
pub const MAX_FILE_ENV: &str = "CUTLINE_MAX_FILE_MIB";

/// The cap when [`MAX_FILE_ENV`] is unset or not a positive number: 64 MiB.
pub const DEFAULT_MAX_FILE_MIB: u64 = 64;

/// The cap in bytes (from [`MAX_FILE_ENV`], else [`DEFAULT_MAX_FILE_MIB`]).
pub fn max_file_bytes() -> u64 {
    let mib = std::env::var(MAX_FILE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_MAX_FILE_MIB);
    mib.saturating_mul(1 << 20)
}

fn too_large(what: &str, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "{what}, over the {} MiB limit for one file (set {MAX_FILE_ENV} to raise it)",
            cap >> 20
        ),
    )
}

fn not_regular() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "not a regular file (a device, pipe or directory is never read)",
    )
}

/// Open `path` for reading when it is a regular file (after links): its
/// type is checked first, then it is opened with `O_NONBLOCK` (so a FIFO
/// swapped in between cannot block the open) and checked again on the
/// open file. No size cap: for readers that stream (`parse FILE`).
pub fn open_regular(path: &Path) -> io::Result<File> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// Why `path` is never written: a link (naming where it points), or not
/// a regular file. The path itself is the caller's to name.
fn refused(path: &Path, meta: &std::fs::Metadata) -> io::Error {
    if meta.file_type().is_symlink() {
        let to = std::fs::read_link(path).map_or_else(|_| "?".to_owned(), |t| t.display().to_string());
        return io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "a symbolic link to {to}: cutline writes only regular files, never through a link nor over one \
                 (edit {to} itself, or replace the link with a file)"
            ),
        );
    }
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "not a regular file (a device, pipe, directory or link is never written)",
    )
}

/// Whether `path` may be written: it does not exist yet, or it is a
/// regular file (the path itself, not what a link there points to).
pub fn check_writable(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) => Err(refused(path, &m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Open `path` to write (`append`: at its end, created when missing; else
/// an existing file opened in place) when it is a regular file: opened
/// with `O_NOFOLLOW`, so a link swapped in after the check is refused by
/// the open itself rather than followed.
pub fn open_write(path: &Path, append: bool) -> io::Result<File> {
    check_writable(path)?;
    let mut o = OpenOptions::new();
    if append {
        o.append(true).create(true);
    } else {
        o.write(true);
    }
    let file = o
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match std::fs::symlink_metadata(path) {
            Ok(m) if !m.file_type().is_file() => refused(path, &m),
            _ => e,
        })?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// Replace `path` with `bytes` through a temporary file in the same
/// directory and a rename, so a reader sees the old file or the new one,
/// never a torn one; refused when `path` is a link or not a regular file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// [`write_atomic`] for content made as it is written: `fill` writes into
/// the temporary file (buffered), which replaces `path` only when it
/// returns `Ok`, so a file far larger than memory is never held whole.
pub fn write_atomic_with(path: &Path, fill: impl FnOnce(&mut dyn io::Write) -> io::Result<()>) -> io::Result<()> {
    use std::io::Write as _;
    check_writable(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.{}-{:08x}.tmp", std::process::id(), fastrand::u32(..)));
    let result = (|| {
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        let mut w = io::BufWriter::with_capacity(1 << 16, f);
        fill(&mut w)?;
        w.flush()?;
        let f = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        f.sync_all()?;
        drop(f);
        // Checked again just before the rename: a link put there while the
        // bytes were written is still refused.
        check_writable(path)?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The whole of a regular file, with no size cap (see [`open_regular`]).
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open_regular(path)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| usize::try_from(m.len()).unwrap_or(0)));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Open `path` for a whole read: a regular file (after links, see
/// [`open_regular`]) no larger than the cap. Returns the file and the cap;
/// read it through `Read::take`, since some files (`/proc`) report no size.
pub fn open(path: &Path) -> io::Result<(File, u64)> {
    let file = open_regular(path)?;
    let meta = file.metadata()?;
    let cap = max_file_bytes();
    if meta.len() > cap {
        return Err(too_large(&format!("{} bytes", meta.len()), cap));
    }
    Ok((file, cap))
}

/// The whole of `path`, or an error when it is over the cap (see [`open`]).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let (mut file, cap) = open(path)?;
    let mut bytes = Vec::new();
    (&mut file).take(cap).read_to_end(&mut bytes)?;
    // At the cap: one more read says whether there is more (8 bytes, since
    // some `/proc` files refuse smaller reads).
    if bytes.len() as u64 == cap && !matches!(file.read(&mut [0u8; 8]), Ok(0)) {
        return Err(over_cap(cap));
    }
    Ok(bytes)
}

/// The error for a reader that went past the cap while streaming.
pub fn over_cap(cap: u64) -> io::Error {
    too_large("more bytes than its size says", cap)
}

/// A line of `len` bytes that [`next_line`] skipped, over `cap`.
pub fn line_too_long(len: u64, cap: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "a line of {len} bytes, over the {} MiB a line may take (set {MAX_FILE_ENV} to raise it)",
            cap >> 20
        ),
    )
}

/// One line as read by [`next_line`].
pub enum Line {
    /// A whole line (without its newline) in the buffer.
    Whole,
    /// The file's last line; `ended` when a newline followed it (a line
    /// without one may be a write cut short).
    Last {
        /// Whether a newline ended it.
        ended: bool,
    },
    /// A line longer than the cap: skipped whole, its length.
    TooLong(u64),
}

/// The next line of `r` into `buf`, at most `cap` bytes, without its
/// newline; `Ok(None)` at the end. A line over the cap is skipped whole
/// and only its length kept, so a JSONL file of any size is read in memory
/// bounded by its longest line (sessions, batch answers, batch results).
pub fn next_line(r: &mut impl io::BufRead, buf: &mut Vec<u8>, cap: usize) -> io::Result<Option<Line>> {
    buf.clear();
    let mut skipped: u64 = 0;
    loop {
        let avail = r.fill_buf()?;
        if avail.is_empty() {
            return Ok(match (skipped, buf.is_empty()) {
                (0, true) => None,
                (0, false) => Some(Line::Last { ended: false }),
                (n, _) => Some(Line::TooLong(n)),
            });
        }
        let (take, done) = match memchr::memchr(b'\n', avail) {
            Some(i) => (i, true),
            None => (avail.len(), false),
        };
        if skipped > 0 || buf.len() + take > cap {
            skipped += (buf.len() + take) as u64;
            buf.clear();
        } else {
            buf.extend_from_slice(&avail[..take]);
        }
        r.consume(take + usize::from(done));
        if done {
            return Ok(Some(if skipped > 0 {
                Line::TooLong(skipped)
            } else if r.fill_buf()?.is_empty() {
                Line::Last { ended: true }
            } else {
                Line::Whole
            }));
        }
    }
}
