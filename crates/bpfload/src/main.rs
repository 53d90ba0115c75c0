//! The `tcplab-bpfload` command: the library's [`tcplab_bpfload::run`] on this process's
//! arguments (the same code `python -m tcplab.bpf_loader` runs inside the extension).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(tcplab_bpfload::run(&args));
}
