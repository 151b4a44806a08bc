fn main() {
    std::process::exit(cutline::cli::main());
}
