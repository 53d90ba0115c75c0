//! The `tcplab-emu` binary: [`tcplab_emu::run`] on the config file named on the command
//! line (protocol and exit statuses in the library's docs).

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("tcplab-emu: usage: tcplab-emu CONFIG.json");
        std::process::exit(2)
    };
    if let Err(e) = tcplab_emu::run(&path) {
        eprintln!("tcplab-emu: {}", e.message);
        std::process::exit(e.code)
    }
}
