//! Records the git commit of the tree the extension is built from, so that a run's
//! manifest names it even when tcplab runs from an installed wheel, far from any
//! checkout. `TCPLAB_GIT_COMMIT` in the environment wins (a build from an sdist);
//! outside a git checkout nothing is recorded.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=TCPLAB_GIT_COMMIT");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for f in [".git/HEAD", ".git/index"] {
        if root.join(f).exists() {
            println!("cargo:rerun-if-changed={}", root.join(f).display());
        }
    }
    if std::env::var("TCPLAB_GIT_COMMIT").is_ok() {
        return;
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(commit) = git(&["rev-parse", "HEAD"]) {
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        let suffix = if dirty { "-dirty" } else { "" };
        println!("cargo:rustc-env=TCPLAB_GIT_COMMIT={commit}{suffix}");
    }
}
