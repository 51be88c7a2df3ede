//! A port on a network interface through an AF_PACKET socket with memory-mapped TPACKET_V3
//! rings (Linux `Documentation/networking/packet_mmap.rst`): the kernel fills blocks of the
//! receive ring, the port copies each frame into the batch's reused buffers and hands the block
//! back; transmitted frames are written into the transmit ring's slots and one `sendto` per
//! batch asks the kernel to send them. No allocation per packet.
//!
//! Guarantees: the interface is put in promiscuous mode while the port is open (the kernel
//! removes the membership when the socket closes); frames the host itself sends on the
//! interface are not received (`PACKET_IGNORE_OUTGOING`); a frame longer than the interface's
//! MTU plus its Ethernet header is dropped and counted, never truncated; a frame the kernel
//! truncated on receive (larger than a ring frame) is dropped and counted; an interface that
//! goes down while the port runs is counted (`link_errors`) and the port keeps polling.
//!
//! Sending through the qdisc ([`AfPacketPort::open_qdisc`], the port spec's `qdisc` option):
//! by default frames bypass the interface's queueing discipline (`PACKET_QDISC_BYPASS`), so tc
//! shaping neither limits nor delays them. A port opened through the qdisc has no transmit
//! ring: each frame is one non-blocking `send`, which the kernel hands to the qdisc as it
//! does any socket's, and which fails with `EAGAIN` once the socket's send buffer holds as
//! many bytes as the qdisc has not sent yet (as `libpcap`'s `pcap_inject` in BMv2 blocks
//! there). The port then takes no more ([`Port::can_block`]): what it did not take is offered
//! again, so an egress queue in front of it backs up at the shaped rate.

use crate::iface::{self, interface, os_error, IfCounters};
use crate::packet::{Batch, Packet};
use crate::port::{Port, PortError};
use crate::stats::PortStats;
use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;

/// Receive ring: blocks of 64 KiB, 128 of them (8 MiB); a block is handed over after 1 ms
/// even when not full, so sparse traffic is not delayed. Many small blocks rather than a few
/// large ones: at low rates every block is retired after 1 ms nearly empty, so the number of
/// blocks is how long the reader may be descheduled (128 ms here, 16 ms with 16 blocks: a
/// receiver on a loaded 2-core machine lost frames) before the kernel drops.
const RX_BLOCK_SIZE: u32 = 1 << 16;
const RX_BLOCKS: u32 = 128;
const RX_BLOCK_TIMEOUT_MS: u32 = 1;
/// Transmit ring: 2 KiB slots, 512 of them.
const TX_FRAME_SIZE: u32 = 2048;
const TX_BLOCK_SIZE: u32 = 1 << 16;
const TX_BLOCKS: u32 = 16;
/// Where a transmitted frame's data starts in its slot (`TPACKET3_HDRLEN - sizeof(sockaddr_ll)`).
const TX_DATA_OFFSET: usize = libc::TPACKET3_HDRLEN - std::mem::size_of::<libc::sockaddr_ll>();
/// The Ethernet header the MTU does not count.
const ETH_HLEN: usize = 14;

/// An interface port (`N=if:NAME`).
pub struct AfPacketPort {
    id: u32,
    name: String,
    fd: libc::c_int,
    map: *mut u8,
    map_len: usize,
    rx_block: u32,
    /// Within the current receive block: packets left and the offset of the next one.
    rx_left: u32,
    rx_offset: usize,
    tx_slot: u32,
    tx_slots: u32,
    /// Largest frame the port transmits: MTU + Ethernet header.
    max_frame: usize,
    /// Frames go through the interface's qdisc, one `send` each (no transmit ring).
    qdisc: bool,
    stats: Arc<PortStats>,
    counters: Arc<IfCounters>,
}

// SAFETY: the mapping is owned by this port alone; the kernel side is synchronised through the
// rings' status words.
unsafe impl Send for AfPacketPort {}

fn setsockopt<T>(fd: libc::c_int, opt: libc::c_int, v: &T) -> libc::c_int {
    // SAFETY: `v` is a live value of the size passed.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_PACKET,
            opt,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    }
}

impl AfPacketPort {
    /// Opens interface `name` as port `id`. Errors name the interface: it does not exist, is
    /// down, or the process lacks the permission.
    pub fn open(id: u32, name: &str) -> Result<AfPacketPort, PortError> {
        AfPacketPort::open_with(id, name, None, true, false)
    }

    /// As [`AfPacketPort::open`], sending through the interface's qdisc (see the module's
    /// documentation).
    pub fn open_qdisc(id: u32, name: &str) -> Result<AfPacketPort, PortError> {
        AfPacketPort::open_with(id, name, None, true, true)
    }

    /// A port that only transmits (`nevermiss gen`'s sender): its socket receives nothing.
    pub fn open_tx(id: u32, name: &str) -> Result<AfPacketPort, PortError> {
        AfPacketPort::open_with(id, name, None, false, false)
    }

    /// As [`AfPacketPort::open`], and with `Some(group)` the socket joins fanout group `group`
    /// of the interface (`PACKET_FANOUT_HASH`, defragmenting): the kernel spreads received
    /// packets over the group's sockets by flow hash, so that each worker of `--cores` owns one
    /// socket per interface and a flow always reaches the same worker.
    pub fn open_fanout(id: u32, name: &str, group: Option<u16>) -> Result<AfPacketPort, PortError> {
        AfPacketPort::open_with(id, name, group, true, false)
    }

    fn open_with(
        id: u32,
        name: &str,
        group: Option<u16>,
        receive: bool,
        qdisc: bool,
    ) -> Result<AfPacketPort, PortError> {
        let (ifindex, mtu) = interface(name)?;
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // Protocol 0: the socket receives nothing until `bind` names the protocol and the
        // interface (created with ETH_P_ALL it would queue every interface's frames meanwhile).
        // SAFETY: socket creation.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
        if fd < 0 {
            return Err(os_error("AF_PACKET socket", name));
        }
        let mut port = AfPacketPort {
            id,
            name: name.to_string(),
            fd,
            map: std::ptr::null_mut(),
            map_len: 0,
            rx_block: 0,
            rx_left: 0,
            rx_offset: 0,
            tx_slot: 0,
            tx_slots: TX_BLOCK_SIZE / TX_FRAME_SIZE * TX_BLOCKS,
            max_frame: if qdisc {
                mtu + ETH_HLEN
            } else {
                (mtu + ETH_HLEN).min(TX_FRAME_SIZE as usize - TX_DATA_OFFSET)
            },
            qdisc,
            stats: PortStats::new(id),
            counters: Arc::new(IfCounters::default()),
        };
        // From here `port`'s Drop closes the socket (and unmaps) on any error.
        let version = libc::tpacket_versions::TPACKET_V3 as libc::c_int;
        if setsockopt(fd, libc::PACKET_VERSION, &version) < 0 {
            return Err(os_error("PACKET_VERSION TPACKET_V3", name));
        }
        let one: libc::c_int = 1;
        // Best effort: not seeing the host's own frames, and bypassing the qdisc on send.
        setsockopt(fd, libc::PACKET_IGNORE_OUTGOING, &one);
        if !qdisc {
            setsockopt(fd, libc::PACKET_QDISC_BYPASS, &one);
        }
        // A malformed slot is skipped by the kernel rather than stopping the ring.
        setsockopt(fd, libc::PACKET_LOSS, &one);
        let rx = libc::tpacket_req3 {
            tp_block_size: RX_BLOCK_SIZE,
            tp_block_nr: RX_BLOCKS,
            tp_frame_size: TX_FRAME_SIZE,
            tp_frame_nr: RX_BLOCK_SIZE / TX_FRAME_SIZE * RX_BLOCKS,
            tp_retire_blk_tov: RX_BLOCK_TIMEOUT_MS,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        if setsockopt(fd, libc::PACKET_RX_RING, &rx) < 0 {
            return Err(os_error("PACKET_RX_RING", name));
        }
        let tx = libc::tpacket_req3 {
            tp_block_size: TX_BLOCK_SIZE,
            tp_block_nr: TX_BLOCKS,
            tp_frame_size: TX_FRAME_SIZE,
            tp_frame_nr: port.tx_slots,
            tp_retire_blk_tov: 0,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        if !qdisc && setsockopt(fd, libc::PACKET_TX_RING, &tx) < 0 {
            return Err(os_error("PACKET_TX_RING", name));
        }
        let len = if qdisc {
            (RX_BLOCK_SIZE * RX_BLOCKS) as usize
        } else {
            (RX_BLOCK_SIZE * RX_BLOCKS + TX_BLOCK_SIZE * TX_BLOCKS) as usize
        };
        // SAFETY: maps the rings the socket just set up (receive ring first).
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED | libc::MAP_POPULATE,
                fd,
                0,
            )
        };
        let map = if map == libc::MAP_FAILED {
            // MAP_LOCKED needs RLIMIT_MEMLOCK; without it, an ordinary mapping.
            // SAFETY: as above.
            let m = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if m == libc::MAP_FAILED {
                return Err(os_error("mmap of the rings", name));
            }
            m
        } else {
            map
        };
        port.map = map.cast();
        port.map_len = len;
        // SAFETY: zeroed sockaddr_ll with the family, protocol and interface set.
        let rc = unsafe {
            let mut sa: libc::sockaddr_ll = std::mem::zeroed();
            sa.sll_family = libc::AF_PACKET as u16;
            sa.sll_protocol = if receive { proto } else { 0 };
            sa.sll_ifindex = ifindex as i32;
            libc::bind(
                fd,
                (&sa as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(os_error("bind", name));
        }
        let mreq = libc::packet_mreq {
            mr_ifindex: ifindex as i32,
            mr_type: libc::PACKET_MR_PROMISC as u16,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        if setsockopt(fd, libc::PACKET_ADD_MEMBERSHIP, &mreq) < 0 {
            return Err(os_error("promiscuous mode", name));
        }
        if let Some(g) = group {
            let arg: libc::c_int = (u32::from(g)
                | ((libc::PACKET_FANOUT_HASH | libc::PACKET_FANOUT_FLAG_DEFRAG) << 16))
                as libc::c_int;
            if setsockopt(fd, libc::PACKET_FANOUT, &arg) < 0 {
                return Err(os_error("PACKET_FANOUT", name));
            }
        }
        Ok(port)
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The counters beside [`PortStats`].
    pub fn counters(&self) -> &Arc<IfCounters> {
        &self.counters
    }

    fn rx_block_ptr(&self, b: u32) -> *mut libc::tpacket_block_desc {
        // SAFETY: b < RX_BLOCKS, inside the mapping.
        unsafe { self.map.add((b * RX_BLOCK_SIZE) as usize).cast() }
    }

    fn tx_slot_ptr(&self, s: u32) -> *mut u8 {
        let base = (RX_BLOCK_SIZE * RX_BLOCKS) as usize;
        // Slots do not straddle blocks: TX_BLOCK_SIZE is a multiple of TX_FRAME_SIZE.
        // SAFETY: s < tx_slots, inside the mapping.
        unsafe { self.map.add(base + (s * TX_FRAME_SIZE) as usize) }
    }

    /// Reads the kernel's drop counter (it resets on read).
    fn poll_kernel_stats(&self) {
        let mut st = libc::tpacket_stats_v3 {
            tp_packets: 0,
            tp_drops: 0,
            tp_freeze_q_cnt: 0,
        };
        let mut len = std::mem::size_of::<libc::tpacket_stats_v3>() as libc::socklen_t;
        // SAFETY: a live struct of the size passed.
        let rc = unsafe {
            libc::getsockopt(
                self.fd,
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut st as *mut libc::tpacket_stats_v3).cast(),
                &mut len,
            )
        };
        if rc == 0 && st.tp_drops > 0 {
            self.counters
                .kernel_drops
                .fetch_add(u64::from(st.tp_drops), Ordering::Relaxed);
            self.stats.add_dropped(u64::from(st.tp_drops));
        }
    }
}

impl Port for AfPacketPort {
    fn id(&self) -> u32 {
        self.id
    }

    fn rx_burst(&mut self, batch: &mut Batch) -> Result<usize, PortError> {
        let mut n = 0usize;
        let mut bytes = 0u64;
        while !batch.is_full() {
            let desc = self.rx_block_ptr(self.rx_block);
            // SAFETY: the block descriptor lies in the mapping; its status word is shared
            // with the kernel and read volatile, then the block's contents after an acquire.
            let (status, num, first) = unsafe {
                let h = std::ptr::addr_of_mut!((*desc).hdr.bh1);
                let status = std::ptr::read_volatile(std::ptr::addr_of!((*h).block_status));
                (
                    status,
                    std::ptr::read_volatile(std::ptr::addr_of!((*h).num_pkts)),
                    std::ptr::read_volatile(std::ptr::addr_of!((*h).offset_to_first_pkt)),
                )
            };
            if status & libc::TP_STATUS_USER == 0 {
                break;
            }
            fence(Ordering::Acquire);
            if self.rx_left == 0 && self.rx_offset == 0 {
                self.rx_left = num;
                self.rx_offset = first as usize;
            }
            while self.rx_left > 0 && !batch.is_full() {
                // SAFETY: the kernel wrote a tpacket3_hdr at this offset of the block, and
                // the frame's bytes after it, inside the block.
                let (next, data) = unsafe {
                    let base = desc.cast::<u8>();
                    let h = base.add(self.rx_offset).cast::<libc::tpacket3_hdr>();
                    let snap = (*h).tp_snaplen as usize;
                    let len = (*h).tp_len as usize;
                    let data = std::slice::from_raw_parts(
                        base.add(self.rx_offset + (*h).tp_mac as usize),
                        snap,
                    );
                    ((*h).tp_next_offset as usize, (data, len))
                };
                let (data, len) = data;
                if data.len() < len {
                    self.counters.oversized.fetch_add(1, Ordering::Relaxed);
                    self.stats.add_dropped(1);
                } else {
                    batch.push(data, self.id, 0);
                    n += 1;
                    bytes += data.len() as u64;
                }
                self.rx_left -= 1;
                self.rx_offset += next;
            }
            if self.rx_left == 0 {
                // The whole block is read: hand it back to the kernel.
                fence(Ordering::Release);
                // SAFETY: as above; writing the status returns the block.
                unsafe {
                    let h = std::ptr::addr_of_mut!((*desc).hdr.bh1);
                    std::ptr::write_volatile(
                        std::ptr::addr_of_mut!((*h).block_status),
                        libc::TP_STATUS_KERNEL,
                    );
                }
                self.rx_offset = 0;
                self.rx_block = (self.rx_block + 1) % RX_BLOCKS;
                if self.rx_block == 0 {
                    self.poll_kernel_stats();
                }
            }
        }
        if n > 0 {
            self.stats.add_rx(n as u64, bytes);
        }
        Ok(n)
    }

    fn rx_done(&self) -> bool {
        false
    }

    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError> {
        if self.qdisc {
            return Ok(self.tx_qdisc(pkts));
        }
        let mut taken = 0usize;
        let mut bytes = 0u64;
        let mut kicked = false;
        for p in pkts {
            let data = p.data();
            if data.len() > self.max_frame {
                // Not taken: the caller counts it as the port's drop.
                self.counters.oversized.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let slot = self.tx_slot_ptr(self.tx_slot);
            let hdr = slot.cast::<libc::tpacket3_hdr>();
            // SAFETY: the slot's header lies in the mapping; its status is shared with the
            // kernel.
            let mut status =
                unsafe { std::ptr::read_volatile(std::ptr::addr_of!((*hdr).tp_status)) };
            if status != libc::TP_STATUS_AVAILABLE
                && status != libc::TP_STATUS_WRONG_FORMAT
                && !kicked
            {
                // The ring is full: let the kernel send what is queued, then look again.
                self.kick();
                kicked = true;
                // SAFETY: as above.
                status = unsafe { std::ptr::read_volatile(std::ptr::addr_of!((*hdr).tp_status)) };
            }
            if status != libc::TP_STATUS_AVAILABLE && status != libc::TP_STATUS_WRONG_FORMAT {
                break;
            }
            // SAFETY: the slot is ours (AVAILABLE); the data fits (max_frame ≤ slot room).
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), slot.add(TX_DATA_OFFSET), data.len());
                (*hdr).tp_next_offset = 0;
                (*hdr).tp_len = data.len() as u32;
                (*hdr).tp_snaplen = data.len() as u32;
                fence(Ordering::Release);
                std::ptr::write_volatile(
                    std::ptr::addr_of_mut!((*hdr).tp_status),
                    libc::TP_STATUS_SEND_REQUEST,
                );
            }
            self.tx_slot = (self.tx_slot + 1) % self.tx_slots;
            taken += 1;
            bytes += data.len() as u64;
        }
        if taken > 0 {
            self.kick();
            self.stats.add_tx(taken as u64, bytes);
        }
        Ok(taken)
    }

    fn flush(&mut self) -> Result<(), PortError> {
        if !self.qdisc {
            self.kick();
        }
        Ok(())
    }

    fn stats(&self) -> &Arc<PortStats> {
        &self.stats
    }

    fn describe(&self) -> String {
        if self.qdisc {
            format!(
                "{}=if:{} (AF_PACKET, TPACKET_V3 receive ring, sending through the qdisc)",
                self.id, self.name
            )
        } else {
            format!("{}=if:{} (AF_PACKET, TPACKET_V3 rings)", self.id, self.name)
        }
    }

    fn link_up(&self) -> bool {
        iface::link_up(&self.name)
    }

    fn can_block(&self) -> bool {
        self.qdisc
    }

    /// The socket: readable when the kernel hands over a receive block (TPACKET_V3).
    fn wait_fds(&self, out: &mut Vec<std::os::fd::RawFd>) -> bool {
        out.push(self.fd);
        true
    }
}

impl AfPacketPort {
    /// Sends each frame through the qdisc until the socket's send buffer is full (`EAGAIN`):
    /// returns how many it took. A frame the qdisc itself dropped (`ENOBUFS`: its queue was
    /// full) was taken and is counted as dropped, as one too large is; a failed send for any
    /// other reason (the link down or gone) is counted and taken.
    fn tx_qdisc(&mut self, pkts: &[Packet]) -> usize {
        let (mut taken, mut sent, mut bytes) = (0usize, 0u64, 0u64);
        for p in pkts {
            let data = p.data();
            if data.len() > self.max_frame {
                self.counters.oversized.fetch_add(1, Ordering::Relaxed);
                self.stats.add_dropped(1);
                taken += 1;
                continue;
            }
            // SAFETY: a send of the frame's bytes on our own bound socket.
            let rc = unsafe {
                libc::send(
                    self.fd,
                    data.as_ptr().cast(),
                    data.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if rc < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => break,
                    Some(libc::ENOBUFS) => {
                        self.counters.qdisc_drops.fetch_add(1, Ordering::Relaxed);
                        self.stats.add_dropped(1);
                    }
                    _ => {
                        self.counters.link_errors.fetch_add(1, Ordering::Relaxed);
                        self.stats.add_dropped(1);
                    }
                }
            } else {
                sent += 1;
                bytes += data.len() as u64;
            }
            taken += 1;
        }
        if sent > 0 {
            self.stats.add_tx(sent, bytes);
        }
        taken
    }

    /// Asks the kernel to send the queued slots (without waiting).
    fn kick(&self) {
        iface::kick(self.fd, &self.counters);
    }
}

impl Drop for AfPacketPort {
    fn drop(&mut self) {
        self.poll_kernel_stats();
        self.counters.report(self.id, &self.name);
        // SAFETY: unmapping our own mapping and closing our own socket, once.
        unsafe {
            if !self.map.is_null() {
                libc::munmap(self.map.cast(), self.map_len);
            }
            libc::close(self.fd);
        }
    }
}
