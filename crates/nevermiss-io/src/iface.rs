//! What the interface ports need of the kernel's interfaces, below both back ends
//! ([`crate::afpacket`], [`crate::afxdp`]): an interface's index, MTU, link state and receive
//! queues, a send that makes the kernel walk a transmit ring, and the counters an interface port
//! keeps beside its [`PortStats`](crate::stats::PortStats). Errors name the interface.

use crate::port::PortError;
use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters an interface port keeps beside [`PortStats`](crate::stats::PortStats).
#[derive(Debug, Default)]
pub struct IfCounters {
    /// Frames dropped because they were larger than the MTU (transmit) or than a ring frame
    /// (receive: truncated by the kernel).
    pub oversized: AtomicU64,
    /// Sends that failed because the link was down or gone.
    pub link_errors: AtomicU64,
    /// Frames the kernel dropped because the receive ring was full (`PACKET_STATISTICS`).
    pub kernel_drops: AtomicU64,
    /// Frames sent through the qdisc that it dropped (its queue was full).
    pub qdisc_drops: AtomicU64,
}

pub(crate) fn os_error(what: &str, name: &str) -> PortError {
    let e = io::Error::last_os_error();
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => {
            " (AF_PACKET sockets need CAP_NET_RAW: run as root)"
        }
        _ => "",
    };
    PortError::Other(format!("interface {name}: {what}: {e}{hint}"))
}

/// An `ifreq` ioctl on a throwaway socket; returns the request after the call.
fn ifreq(name: &str, req: libc::c_ulong) -> Result<libc::ifreq, PortError> {
    // SAFETY: plain socket creation, ioctl on a zeroed ifreq with the name set, close.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        if fd < 0 {
            return Err(os_error("socket", name));
        }
        let mut r: libc::ifreq = std::mem::zeroed();
        for (i, b) in name.bytes().take(libc::IFNAMSIZ - 1).enumerate() {
            r.ifr_name[i] = b as libc::c_char;
        }
        let rc = libc::ioctl(fd, req as _, &mut r);
        let err = (rc < 0).then(|| os_error("ioctl", name));
        libc::close(fd);
        match err {
            Some(e) => Err(e),
            None => Ok(r),
        }
    }
}

/// An interface's index and MTU, checked: it exists and is up (errors name it).
pub(crate) fn interface(name: &str) -> Result<(u32, usize), PortError> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(PortError::Other(format!(
            "interface name `{name}`: 1 to {} characters",
            libc::IFNAMSIZ - 1
        )));
    }
    let cname = CString::new(name)
        .map_err(|_| PortError::Other(format!("interface name `{name}` contains NUL")))?;
    // SAFETY: a NUL-terminated name.
    let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
    if ifindex == 0 {
        return Err(PortError::Other(format!(
            "interface {name}: no such interface"
        )));
    }
    let flags = ifreq(name, libc::SIOCGIFFLAGS as libc::c_ulong)?;
    // SAFETY: SIOCGIFFLAGS filled the flags member.
    let flags = unsafe { flags.ifr_ifru.ifru_flags };
    if flags & libc::IFF_UP as libc::c_short == 0 {
        return Err(PortError::Other(format!(
            "interface {name} is down (ip link set {name} up)"
        )));
    }
    let mtu = ifreq(name, libc::SIOCGIFMTU as libc::c_ulong)?;
    // SAFETY: SIOCGIFMTU filled the mtu member.
    let mtu = unsafe { mtu.ifr_ifru.ifru_mtu }.max(68) as usize;

    Ok((ifindex, mtu))
}

/// Whether interface `name` is up and has carrier (`IFF_UP` and `IFF_RUNNING`); false when
/// it is down, has no carrier (a veth whose peer is down) or is gone.
pub(crate) fn link_up(name: &str) -> bool {
    let Ok(r) = ifreq(name, libc::SIOCGIFFLAGS as libc::c_ulong) else {
        return false;
    };
    // SAFETY: SIOCGIFFLAGS filled the flags member.
    let flags = unsafe { r.ifr_ifru.ifru_flags };
    let want = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    flags & want == want
}

/// The MTU of an interface that exists and is up.
pub(crate) fn interface_mtu(name: &str) -> Result<usize, PortError> {
    interface(name).map(|(_, mtu)| mtu)
}

/// A send of nothing on socket `fd`: the kernel walks its transmit ring. A busy ring is not an
/// error; anything else (the link down or gone) is counted.
pub(crate) fn kick(fd: libc::c_int, counters: &IfCounters) {
    // SAFETY: a zero-length send on our own socket.
    let rc = unsafe {
        libc::sendto(
            fd,
            std::ptr::null(),
            0,
            libc::MSG_DONTWAIT,
            std::ptr::null(),
            0,
        )
    };
    if rc < 0 {
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EBUSY) | Some(libc::EINTR) => {}
            _ => {
                counters.link_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl IfCounters {
    /// Says on stderr what the port dropped or failed, if anything (at its end).
    pub(crate) fn report(&self, id: u32, name: &str) {
        let (over, link, kernel, qdisc) = (
            self.oversized.load(Ordering::Relaxed),
            self.link_errors.load(Ordering::Relaxed),
            self.kernel_drops.load(Ordering::Relaxed),
            self.qdisc_drops.load(Ordering::Relaxed),
        );
        if over + link + kernel + qdisc > 0 {
            eprintln!(
                "port {id}=if:{name}: {over} frames dropped as oversized, {link} sends failed \
                 (link down or gone), {kernel} frames dropped by the kernel (receive ring full), \
                 {qdisc} dropped by the qdisc (its queue full)"
            );
        }
    }
}

/// The number of receive queues of interface `name` (0 when it cannot be read: no such
/// interface).
pub fn rx_queues(name: &str) -> usize {
    std::fs::read_dir(format!("/sys/class/net/{name}/queues"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
                .count()
        })
        .unwrap_or(0)
}
