//! The `cutline` binary: everything is in the library (`cli::main`).

/// mimalloc instead of glibc malloc: an analysis keeps many small live
/// objects (every kept `Value`), which glibc's free lists and heap trimming
/// handle slowly (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cutline::cli::main());
}
