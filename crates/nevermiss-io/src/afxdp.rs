//! A port on a network interface through AF_XDP sockets (Linux
//! `Documentation/networking/af_xdp.rst`), set up by libxdp (xdp-tools): libxdp creates each
//! socket's UMEM and the socket, and loads its default XDP program once per interface (the
//! sockets on the interface's queues share it and its `xsks_map`, which redirects each receive
//! queue into the socket bound to it; libxdp removes the program with the last socket). The four
//! rings of every socket (fill, completion, rx, tx) are driven here; their producer/consumer
//! protocol is the one libxdp's `xsk.h` inlines.
//!
//! A port owns one socket per receive queue it serves, each with its own UMEM: alone, every
//! queue of the interface; as worker `w` of `n` (`--cores n`), the queues `q` with
//! `q mod n = w` (so worker `w` owns queue `w`, and an interface needs at least `n` queues).
//! It receives from its sockets in turn and transmits through its first one.
//!
//! libxdp is loaded at run time (`dlopen("libxdp.so.1")`), so nevermiss builds and runs without
//! it; opening an AF_XDP port without it is an error that says how to get it (Debian:
//! `libxdp1`). Each UMEM holds 4096 frames of 2 KiB: half are lent to the kernel for receiving
//! (returned to the fill ring as soon as a frame is copied into the batch), half are
//! transmit buffers (reclaimed from the completion ring).
//!
//! Guarantees as [`crate::afpacket`]: no allocation per packet, frames over the MTU dropped and
//! counted, errors naming the interface.

use crate::iface::{self, interface_mtu, rx_queues, IfCounters};
use crate::packet::{Batch, Packet};
use crate::port::{Port, PortError};
use crate::stats::PortStats;
use std::ffi::{c_void, CStr, CString};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

const FRAME_SIZE: u32 = 2048;
const FRAMES: u32 = 4096;
const RX_FRAMES: u32 = FRAMES / 2;
const RING: u32 = 2048;

/// `struct xsk_ring_prod` / `struct xsk_ring_cons` of libxdp's `xsk.h`.
#[repr(C)]
struct Ring {
    cached_prod: u32,
    cached_cons: u32,
    mask: u32,
    size: u32,
    producer: *mut u32,
    consumer: *mut u32,
    ring: *mut c_void,
    flags: *mut u32,
}

impl Ring {
    fn zeroed() -> Ring {
        Ring {
            cached_prod: 0,
            cached_cons: 0,
            mask: 0,
            size: 0,
            producer: std::ptr::null_mut(),
            consumer: std::ptr::null_mut(),
            ring: std::ptr::null_mut(),
            flags: std::ptr::null_mut(),
        }
    }

    fn load(p: *mut u32) -> u32 {
        // SAFETY: `p` points at the ring's shared index, mapped while the socket lives.
        unsafe { AtomicU32::from_ptr(p) }.load(Ordering::Acquire)
    }

    fn store(p: *mut u32, v: u32) {
        // SAFETY: as in `load`.
        unsafe { AtomicU32::from_ptr(p) }.store(v, Ordering::Release)
    }

    /// Producer side: reserves `n` entries; their first index, or `None` if fewer are free.
    fn reserve(&mut self, n: u32) -> Option<u32> {
        let mut free = self.cached_cons.wrapping_sub(self.cached_prod);
        if free < n {
            self.cached_cons = Ring::load(self.consumer).wrapping_add(self.size);
            free = self.cached_cons.wrapping_sub(self.cached_prod);
        }
        if free < n {
            return None;
        }
        let i = self.cached_prod;
        self.cached_prod = self.cached_prod.wrapping_add(n);
        Some(i)
    }

    fn submit(&mut self, n: u32) {
        Ring::store(self.producer, Ring::load(self.producer).wrapping_add(n));
    }

    /// Consumer side: up to `n` entries ready; (first index, count).
    fn peek(&mut self, n: u32) -> (u32, u32) {
        let mut avail = self.cached_prod.wrapping_sub(self.cached_cons);
        if avail == 0 {
            self.cached_prod = Ring::load(self.producer);
            avail = self.cached_prod.wrapping_sub(self.cached_cons);
        }
        let got = avail.min(n);
        let i = self.cached_cons;
        self.cached_cons = self.cached_cons.wrapping_add(got);
        (i, got)
    }

    fn release(&mut self, n: u32) {
        Ring::store(self.consumer, Ring::load(self.consumer).wrapping_add(n));
    }

    /// Entry `i` of a ring of `T` (u64 addresses or descriptors).
    fn at<T>(&self, i: u32) -> *mut T {
        // SAFETY: the index is masked into the ring, which holds `size` entries of `T`.
        unsafe { self.ring.cast::<T>().add((i & self.mask) as usize) }
    }
}

/// `struct xdp_desc`.
#[repr(C)]
#[derive(Clone, Copy)]
struct XdpDesc {
    addr: u64,
    len: u32,
    options: u32,
}

#[repr(C)]
struct UmemConfig {
    fill_size: u32,
    comp_size: u32,
    frame_size: u32,
    frame_headroom: u32,
    flags: u32,
}

#[repr(C)]
struct SocketConfig {
    rx_size: u32,
    tx_size: u32,
    libxdp_flags: u32,
    xdp_flags: u32,
    bind_flags: u16,
}

type UmemCreate = unsafe extern "C" fn(
    *mut *mut c_void,
    *mut c_void,
    u64,
    *mut Ring,
    *mut Ring,
    *const UmemConfig,
) -> i32;
type SocketCreate = unsafe extern "C" fn(
    *mut *mut c_void,
    *const libc::c_char,
    u32,
    *mut c_void,
    *mut Ring,
    *mut Ring,
    *const SocketConfig,
) -> i32;
type SocketFd = unsafe extern "C" fn(*const c_void) -> i32;
type SocketDelete = unsafe extern "C" fn(*mut c_void);
type UmemDelete = unsafe extern "C" fn(*mut c_void) -> i32;

/// Why an AF_XDP socket could not be set up (the port's error adds the interface).
#[derive(Clone, Debug, PartialEq, Eq)]
enum XdpError {
    /// libxdp is not installed.
    NoLibxdp,
    /// libxdp lacks an entry point.
    NoSymbol(String),
    /// The UMEM's memory could not be mapped.
    UmemMap,
    /// `xsk_umem__create` failed with this errno.
    Umem(i32),
    /// `xsk_socket__create` failed on a receive queue with this errno.
    Socket {
        /// The receive queue.
        queue: u32,
        /// The errno.
        errno: i32,
    },
    /// The fill ring holds fewer entries than the ring size asked for.
    SmallFillRing,
}

impl std::fmt::Display for XdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            XdpError::NoLibxdp => f.write_str(
                "AF_XDP needs libxdp (Debian: apt install libxdp1), which is not installed; use \
                 backend=af_packet",
            ),
            XdpError::NoSymbol(name) => write!(f, "libxdp has no {name}"),
            XdpError::UmemMap => f.write_str("cannot map the UMEM"),
            XdpError::Umem(e) => write!(f, "xsk_umem__create: {}", errno_text(*e)),
            XdpError::Socket { queue, errno } => write!(
                f,
                "xsk_socket__create on queue {queue}: {} (AF_XDP needs root, a kernel with XDP \
                 and a mounted bpffs: mount -t bpf bpf /sys/fs/bpf)",
                errno_text(*errno)
            ),
            XdpError::SmallFillRing => f.write_str("the fill ring is smaller than expected"),
        }
    }
}

/// libxdp's entry points.
struct Lib {
    umem_create: UmemCreate,
    socket_create: SocketCreate,
    socket_fd: SocketFd,
    socket_delete: SocketDelete,
    umem_delete: UmemDelete,
}

fn lib() -> Result<&'static Lib, XdpError> {
    static LIB: OnceLock<Result<Lib, XdpError>> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: dlopen/dlsym with NUL-terminated names; the handle is never closed, so the
        // function pointers stay valid for the process.
        unsafe {
            let h = libc::dlopen(c"libxdp.so.1".as_ptr(), libc::RTLD_NOW);
            if h.is_null() {
                return Err(XdpError::NoLibxdp);
            }
            let sym = |name: &CStr| {
                let p = libc::dlsym(h, name.as_ptr());
                if p.is_null() {
                    Err(XdpError::NoSymbol(name.to_string_lossy().into_owned()))
                } else {
                    Ok(p)
                }
            };
            // libxdp and libbpf print their fallbacks (no dispatcher program, unknown ELF
            // sections) to stderr; errors reach the user through the return codes instead.
            type SetPrint = unsafe extern "C" fn(*const c_void) -> *const c_void;
            for quiet in [c"libxdp_set_print", c"libbpf_set_print"] {
                if let Ok(f) = sym(quiet) {
                    std::mem::transmute::<*mut c_void, SetPrint>(f)(std::ptr::null());
                }
            }
            Ok(Lib {
                umem_create: std::mem::transmute::<*mut c_void, UmemCreate>(sym(
                    c"xsk_umem__create",
                )?),
                socket_create: std::mem::transmute::<*mut c_void, SocketCreate>(sym(
                    c"xsk_socket__create",
                )?),
                socket_fd: std::mem::transmute::<*mut c_void, SocketFd>(sym(c"xsk_socket__fd")?),
                socket_delete: std::mem::transmute::<*mut c_void, SocketDelete>(sym(
                    c"xsk_socket__delete",
                )?),
                umem_delete: std::mem::transmute::<*mut c_void, UmemDelete>(sym(
                    c"xsk_umem__delete",
                )?),
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// A socket's four rings. libxdp keeps pointers to the structures it fills in at creation
/// (`xsk_socket.rx`/`.tx`, the context's `fill`/`comp`) and reads them again when the socket is
/// deleted, to unmap the rings: they live on the heap, at an address that stays put however
/// often the [`Xsk`] that owns them moves. (Held inline, every move left libxdp a stale
/// pointer, and the delete unmapped whatever the old place held: rings stayed mapped, or
/// another mapping went.)
struct Rings {
    fill: Ring,
    comp: Ring,
    rx: Ring,
    tx: Ring,
}

/// One AF_XDP socket on one receive queue, with its own UMEM and rings.
struct Xsk {
    queue: u32,
    lib: &'static Lib,
    area: *mut u8,
    umem: *mut c_void,
    xsk: *mut c_void,
    fd: i32,
    /// Never replaced while the socket lives (libxdp points into it).
    rings: Box<Rings>,
    /// Transmit frames not in flight.
    free_tx: Vec<u64>,
}

impl Xsk {
    /// A socket on queue `queue` of interface `cname`; errors are bare (the caller names the
    /// interface).
    fn open(lib: &'static Lib, cname: &CStr, queue: u32) -> Result<Xsk, XdpError> {
        let len = (FRAMES * FRAME_SIZE) as usize;
        // SAFETY: an anonymous private mapping, page-aligned as the UMEM must be.
        let area = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if area == libc::MAP_FAILED {
            return Err(XdpError::UmemMap);
        }
        // From here on, Drop releases what was made.
        let mut x = Xsk {
            queue,
            lib,
            area: area.cast(),
            umem: std::ptr::null_mut(),
            xsk: std::ptr::null_mut(),
            fd: -1,
            rings: Box::new(Rings {
                fill: Ring::zeroed(),
                comp: Ring::zeroed(),
                rx: Ring::zeroed(),
                tx: Ring::zeroed(),
            }),
            free_tx: (RX_FRAMES..FRAMES)
                .map(|f| u64::from(f * FRAME_SIZE))
                .collect(),
        };
        let ucfg = UmemConfig {
            fill_size: RING,
            comp_size: RING,
            frame_size: FRAME_SIZE,
            frame_headroom: 0,
            flags: 0,
        };
        // SAFETY: libxdp fills the rings and the handle; the area outlives the UMEM, and the
        // boxed rings the socket (Drop).
        let rc = unsafe {
            (lib.umem_create)(
                &mut x.umem,
                area,
                len as u64,
                &mut x.rings.fill,
                &mut x.rings.comp,
                &ucfg,
            )
        };
        if rc != 0 {
            x.umem = std::ptr::null_mut();
            return Err(XdpError::Umem(-rc));
        }
        let scfg = SocketConfig {
            rx_size: RING,
            tx_size: RING,
            libxdp_flags: 0,
            xdp_flags: 0,
            bind_flags: 0,
        };
        // A socket of a process that just ended may still hold the queue for a moment (the
        // kernel releases it asynchronously): EBUSY is retried for up to a second.
        let mut rc = 0;
        for attempt in 0..20 {
            // SAFETY: as above; libxdp loads its default XDP program on the interface, or
            // adds this socket to the one already there.
            rc = unsafe {
                (lib.socket_create)(
                    &mut x.xsk,
                    cname.as_ptr(),
                    queue,
                    x.umem,
                    &mut x.rings.rx,
                    &mut x.rings.tx,
                    &scfg,
                )
            };
            if rc != -libc::EBUSY || attempt == 19 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if rc != 0 {
            x.xsk = std::ptr::null_mut();
            return Err(XdpError::Socket { queue, errno: -rc });
        }
        // SAFETY: a live socket handle.
        x.fd = unsafe { (lib.socket_fd)(x.xsk) };
        // Lend the receive half of the UMEM to the kernel.
        let lend = RX_FRAMES.min(RING);
        let Some(i) = x.rings.fill.reserve(lend) else {
            return Err(XdpError::SmallFillRing);
        };
        for k in 0..lend {
            // SAFETY: a reserved fill entry.
            unsafe { *x.rings.fill.at::<u64>(i.wrapping_add(k)) = u64::from(k * FRAME_SIZE) };
        }
        x.rings.fill.submit(lend);
        Ok(x)
    }

    /// Takes back the transmit frames the kernel has sent.
    fn reclaim(&mut self) {
        let (i, n) = self.rings.comp.peek(RING);
        for k in 0..n {
            // SAFETY: a completed entry.
            self.free_tx
                .push(unsafe { *self.rings.comp.at::<u64>(i.wrapping_add(k)) });
        }
        if n > 0 {
            self.rings.comp.release(n);
        }
    }

    fn frame(&self, addr: u64, len: usize) -> &[u8] {
        let off = (addr as usize).min((FRAMES * FRAME_SIZE) as usize);
        let len = len.min((FRAMES * FRAME_SIZE) as usize - off);
        // SAFETY: inside the UMEM.
        unsafe { std::slice::from_raw_parts(self.area.add(off), len) }
    }

    /// Moves up to `batch.free()` received frames into `batch` (as port `id`), handing their
    /// UMEM frames straight back to the fill ring; (frames, bytes).
    fn receive(&mut self, batch: &mut Batch, id: u32, refill: &mut Vec<u64>) -> (u32, u64) {
        let want = batch.free() as u32;
        if want == 0 {
            return (0, 0);
        }
        let (i, n) = self.rings.rx.peek(want);
        if n == 0 {
            return (0, 0);
        }
        let mut bytes = 0u64;
        refill.clear();
        for k in 0..n {
            // SAFETY: a received descriptor.
            let d = unsafe { *self.rings.rx.at::<XdpDesc>(i.wrapping_add(k)) };
            let data = self.frame(d.addr, d.len as usize);
            batch.push(data, id, 0);
            bytes += data.len() as u64;
            // The frame's base address (aligned mode: addr may carry an offset).
            refill.push(d.addr - d.addr % u64::from(FRAME_SIZE));
        }
        self.rings.rx.release(n);
        // Every frame taken goes straight back to the fill ring (it has room: the kernel
        // holds at most the RX_FRAMES lent).
        if let Some(f) = self.rings.fill.reserve(n) {
            for (k, a) in refill.iter().enumerate() {
                // SAFETY: a reserved fill entry.
                unsafe { *self.rings.fill.at::<u64>(f.wrapping_add(k as u32)) = *a };
            }
            self.rings.fill.submit(n);
        }
        (n, bytes)
    }
}

impl Drop for Xsk {
    fn drop(&mut self) {
        // SAFETY: our own handles and mapping, released once, socket before UMEM.
        unsafe {
            if !self.xsk.is_null() {
                (self.lib.socket_delete)(self.xsk);
            }
            if !self.umem.is_null() {
                (self.lib.umem_delete)(self.umem);
            }
            libc::munmap(self.area.cast(), (FRAMES * FRAME_SIZE) as usize);
        }
    }
}

/// An interface port over AF_XDP (`N=if:NAME,backend=af_xdp`).
pub struct AfXdpPort {
    id: u32,
    name: String,
    /// One socket per receive queue served; transmits go through the first.
    socks: Vec<Xsk>,
    /// The socket the next receive starts with (turns rotate, so no queue starves).
    next: usize,
    max_frame: usize,
    /// Scratch for the addresses handed back to a fill ring.
    refill: Vec<u64>,
    stats: Arc<PortStats>,
    counters: Arc<IfCounters>,
}

// SAFETY: the rings and the UMEMs belong to this port alone; the kernel side is synchronised through
// the rings' indices.
unsafe impl Send for AfXdpPort {}

impl AfXdpPort {
    /// Opens every receive queue of interface `name` as port `id`.
    pub fn open(id: u32, name: &str) -> Result<AfXdpPort, PortError> {
        AfXdpPort::open_worker(id, name, 0, 1)
    }

    /// Opens interface `name` as port `id` of worker `worker` of `workers`: one socket on each
    /// receive queue `q` with `q mod workers = worker`. An interface with fewer than `workers`
    /// receive queues is an error naming it and its queue count (a worker would get none).
    pub fn open_worker(
        id: u32,
        name: &str,
        worker: usize,
        workers: usize,
    ) -> Result<AfXdpPort, PortError> {
        let err = |m: String| PortError::Other(format!("interface {name}: {m}"));
        let lib = lib().map_err(|e| err(e.to_string()))?;
        let mtu = interface_mtu(name)?;
        let cname = CString::new(name)
            .map_err(|_| PortError::Other(format!("interface name `{name}` contains NUL")))?;
        let nq = rx_queues(name).max(1);
        let workers = workers.max(1);
        if nq < workers {
            return Err(err(format!(
                "it has {nq} receive queue{}, and AF_XDP with {workers} workers needs one per \
                 worker (at least {workers}); give it more queues (veth: `ip link add ... \
                 numrxqueues {workers} numtxqueues {workers}`, scripts/testbed.sh --queues \
                 {workers}) or use backend=af_packet (fanout)",
                if nq == 1 { "" } else { "s" }
            )));
        }
        let mut socks = Vec::new();
        for q in (worker..nq).step_by(workers) {
            socks.push(Xsk::open(lib, &cname, q as u32).map_err(|e| err(e.to_string()))?);
        }
        Ok(AfXdpPort {
            id,
            name: name.to_string(),
            socks,
            next: 0,
            max_frame: (mtu + 14).min(FRAME_SIZE as usize),
            refill: Vec::with_capacity(crate::BATCH_MAX),
            stats: PortStats::new(id),
            counters: Arc::new(IfCounters::default()),
        })
    }

    /// The receive queues this port's sockets are bound to.
    pub fn queues(&self) -> Vec<u32> {
        self.socks.iter().map(|s| s.queue).collect()
    }
}

fn errno_text(e: i32) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

impl Port for AfXdpPort {
    fn id(&self) -> u32 {
        self.id
    }

    fn rx_burst(&mut self, batch: &mut Batch) -> Result<usize, PortError> {
        let k = self.socks.len();
        let (mut frames, mut bytes) = (0u32, 0u64);
        for j in 0..k {
            let s = (self.next + j) % k;
            let (n, b) = self.socks[s].receive(batch, self.id, &mut self.refill);
            frames += n;
            bytes += b;
        }
        self.next = (self.next + 1) % k.max(1);
        if frames > 0 {
            self.stats.add_rx(u64::from(frames), bytes);
        }
        Ok(frames as usize)
    }

    fn rx_done(&self) -> bool {
        false
    }

    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError> {
        let Some(x) = self.socks.first_mut() else {
            return Ok(0);
        };
        x.reclaim();
        let mut taken = 0usize;
        let mut bytes = 0u64;
        for p in pkts {
            let data = p.data();
            if data.len() > self.max_frame {
                // Not taken: the caller counts it as the port's drop.
                self.counters.oversized.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let Some(addr) = x.free_tx.pop() else {
                break;
            };
            let Some(i) = x.rings.tx.reserve(1) else {
                x.free_tx.push(addr);
                break;
            };
            // SAFETY: a free transmit frame of the UMEM; the data fits (max_frame).
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), x.area.add(addr as usize), data.len());
                *x.rings.tx.at::<XdpDesc>(i) = XdpDesc {
                    addr,
                    len: data.len() as u32,
                    options: 0,
                };
            }
            taken += 1;
            bytes += data.len() as u64;
        }
        if taken > 0 {
            // One producer update for the batch: the descriptors were reserved in order.
            x.rings.tx.submit(taken as u32);
            iface::kick(x.fd, &self.counters);
            self.stats.add_tx(taken as u64, bytes);
        }
        Ok(taken)
    }

    fn flush(&mut self) -> Result<(), PortError> {
        for x in self.socks.iter_mut() {
            iface::kick(x.fd, &self.counters);
            x.reclaim();
        }
        Ok(())
    }

    fn link_up(&self) -> bool {
        iface::link_up(&self.name)
    }

    /// Every socket: readable when its receive ring holds a frame.
    fn wait_fds(&self, out: &mut Vec<std::os::fd::RawFd>) -> bool {
        out.extend(self.socks.iter().map(|x| x.fd));
        true
    }

    fn stats(&self) -> &Arc<PortStats> {
        &self.stats
    }

    fn describe(&self) -> String {
        let q = self.queues();
        let list = q.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        format!(
            "{}=if:{} (AF_XDP, libxdp, queue{} {list})",
            self.id,
            self.name,
            if q.len() == 1 { "" } else { "s" }
        )
    }
}

impl Drop for AfXdpPort {
    fn drop(&mut self) {
        self.counters.report(self.id, &self.name);
        // The sockets (then their UMEMs) are released by their own Drop.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libxdp keeps the addresses of the ring structures it filled in and unmaps through them
    /// when the socket is deleted: after the port is built (every move of its sockets done) and
    /// after it moves again, they are still where our rings are. libxdp's `struct xsk_socket`
    /// starts with its `rx` and `tx` pointers and then its context, whose first two fields are
    /// `fill` and `comp` (libxdp 1.x, as libbpf's before it). Needs root, iproute2 and libxdp;
    /// skipped otherwise.
    #[test]
    fn libxdp_points_at_our_rings_after_every_move() {
        let ip = |args: &str| {
            std::process::Command::new("ip")
                .args(args.split(' '))
                .output()
                .is_ok_and(|o| o.status.success())
        };
        let (a, b) = (
            format!("nmxr{}a", std::process::id() % 10000),
            format!("nmxr{}b", std::process::id() % 10000),
        );
        if !ip(&format!(
            "link add {a} numrxqueues 2 numtxqueues 2 type veth peer name {b} numrxqueues 2 numtxqueues 2"
        )) {
            eprintln!("skipped: making a veth pair needs root and iproute2");
            return;
        }
        // (libxdp's pointers, ours) for every ring of every socket.
        let pairs = |p: &AfXdpPort| -> Vec<(usize, usize)> {
            let mut v = Vec::new();
            for x in &p.socks {
                // SAFETY: a live socket handle; the layout described above.
                let [rx, tx, ctx] = unsafe { *(x.xsk as *const [usize; 3]) };
                // SAFETY: the socket's live context.
                let [fill, comp] = unsafe { *(ctx as *const [usize; 2]) };
                let ours = [&x.rings.rx, &x.rings.tx, &x.rings.fill, &x.rings.comp]
                    .map(|r| r as *const Ring as usize);
                v.extend([rx, tx, fill, comp].into_iter().zip(ours));
            }
            v
        };
        let opened = (ip(&format!("link set {a} up")) && ip(&format!("link set {b} up")))
            .then(|| AfXdpPort::open(0, &a));
        let outcome = match opened {
            Some(Ok(port)) => {
                let built = pairs(&port);
                let moved = vec![Box::new(port)];
                let again = pairs(&moved[0]);
                drop(moved);
                Some((built, again))
            }
            _ => None,
        };
        ip(&format!("link del {a}"));
        let Some((built, again)) = outcome else {
            eprintln!("skipped: AF_XDP is not available here");
            return;
        };
        assert_eq!(built.len(), 8, "two sockets, four rings each");
        for (theirs, ours) in built.into_iter().chain(again) {
            assert_eq!(theirs, ours, "libxdp points at a ring structure that moved");
        }
    }
}
