//! TUN devices created inside a network namespace.
//!
//! The emulator switches its (only) thread into the target namespace with `setns(2)`,
//! creates the device there through `/dev/net/tun` (`TUNSETIFF`, layer 3, no packet-info
//! header), and switches back. The file descriptor stays bound to the device, so the
//! emulator reads and writes packets of both namespaces from its own. The device is not
//! persistent: it disappears when the descriptor is closed, i.e. when the emulator exits
//! for whatever reason (and with the namespace when that is deleted).
//!
//! No offloads are requested (`TUNSETOFFLOAD` is never called, and without
//! `IFF_VNET_HDR` the device cannot carry GSO packets), so the kernel segments and
//! checksums every packet before it reaches us: each read is one MTU-sized IP packet.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

// <linux/if_tun.h>: _IOW('T', 202, int)
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags in the union.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

fn check(ret: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if ret < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(ret)
}

fn setns(ns: &File, what: &str) -> io::Result<()> {
    // SAFETY: a plain syscall on a descriptor we own.
    check(
        unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) },
        what,
    )
    .map(|_| ())
}

/// Create the TUN device `name` inside the namespace at `netns_path` (e.g.
/// `/run/netns/NAME`); the returned descriptor is non-blocking.
pub fn open_in_netns(netns_path: &str, name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("interface name '{name}' must have 1 to 15 bytes"),
        ));
    }
    let home = File::open("/proc/self/ns/net")?;
    let target = File::open(netns_path)
        .map_err(|e| io::Error::new(e.kind(), format!("{netns_path}: {e}")))?;
    setns(&target, &format!("setns({netns_path})"))?;
    let made = create(name);
    setns(&home, "setns(back to the emulator's namespace)")?;
    made
}

fn create(name: &str) -> io::Result<OwnedFd> {
    let path = c"/dev/net/tun";
    // SAFETY: open(2) with a valid C string; the descriptor is owned right away.
    let fd = check(
        unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        },
        "/dev/net/tun",
    )?;
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which `req` is laid out as.
    check(
        unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) },
        &format!("TUNSETIFF {name}"),
    )?;
    Ok(fd)
}

/// Read one packet into `buf`; `None` when nothing is waiting.
pub fn read_packet(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: read into a buffer we own, bounded by its length.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::WouldBlock {
            Ok(None)
        } else {
            Err(e)
        };
    }
    Ok(Some(n as usize))
}

/// Hand one packet to the namespace's stack (as if it arrived on the device).
pub fn write_packet(fd: &OwnedFd, pkt: &[u8]) -> io::Result<()> {
    // SAFETY: write from a buffer we own, bounded by its length.
    let n = unsafe { libc::write(fd.as_raw_fd(), pkt.as_ptr().cast(), pkt.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
