//! Link-layer and IPv4/TCP/UDP decoding of captured frames.
//!
//! Like opp-sim's trace parsers (reference A.2), only IPv4 TCP and UDP packets are kept; every
//! other frame is counted under a skip reason. A packet is kept when its IPv4 header is complete,
//! it is not a non-first fragment, and the 4 port bytes of its TCP/UDP header were captured.
//! Its length is the IPv4 total-length field, not the captured length (CAIDA traces are snapped).

use nevermiss_io::headers;
use serde::Serialize;

/// Link types this decoder understands (pcap LINKTYPE_* values).
pub mod linktype {
    /// BSD loopback, 4-byte address family in host byte order.
    pub const NULL: u32 = 0;
    /// Ethernet II (with 802.1Q/802.1ad tags).
    pub const ETHERNET: u32 = 1;
    /// DLT_RAW on most BSDs.
    pub const RAW_BSD12: u32 = 12;
    /// DLT_RAW on OpenBSD.
    pub const RAW_BSD14: u32 = 14;
    /// Raw IP.
    pub const RAW: u32 = 101;
    /// OpenBSD loopback, address family in network byte order.
    pub const LOOP: u32 = 108;
    /// Linux cooked capture v1 (SLL).
    pub const LINUX_SLL: u32 = 113;
    /// Raw IPv4.
    pub const IPV4: u32 = 228;
    /// Linux cooked capture v2 (SLL2).
    pub const LINUX_SLL2: u32 = 276;
}

/// The fields of one kept packet.
#[derive(Clone, Copy, Debug)]
pub struct PacketInfo<'a> {
    /// Capture timestamp in nanoseconds.
    pub ts_ns: u64,
    /// IPv4 total length (header + payload) in bytes.
    pub ip_len: u16,
    /// IPv4 source address.
    pub src: [u8; 4],
    /// IPv4 destination address.
    pub dst: [u8; 4],
    /// 6 (TCP) or 17 (UDP).
    pub proto: u8,
    /// TCP/UDP source port.
    pub sport: u16,
    /// TCP/UDP destination port.
    pub dport: u16,
    /// The captured bytes from the first byte of the IPv4 header on.
    pub header: &'a [u8],
    /// Offset of the TCP/UDP header inside `header`.
    pub l4_offset: usize,
}

/// Why a frame was not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// A link type the decoder does not read.
    UnsupportedLinkType,
    /// Not an IPv4 packet.
    NotIpv4,
    /// Neither TCP nor UDP.
    NotTcpUdp,
    /// A fragment other than the first (no ports).
    Fragment,
    /// Captured bytes end before the headers do.
    Truncated,
    /// A header field is impossible (e.g. an IHL below 5).
    Malformed,
}

/// Counters of frames read, kept and skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReadStats {
    /// Frames read.
    pub frames: u64,
    /// Frames kept (IPv4 TCP/UDP).
    pub kept: u64,
    /// Frames skipped: [`Skip::UnsupportedLinkType`].
    pub unsupported_link_type: u64,
    /// Frames skipped: [`Skip::NotIpv4`].
    pub not_ipv4: u64,
    /// Frames skipped: [`Skip::NotTcpUdp`].
    pub not_tcp_udp: u64,
    /// Frames skipped: [`Skip::Fragment`].
    pub fragments: u64,
    /// Frames skipped: [`Skip::Truncated`].
    pub truncated: u64,
    /// Frames skipped: [`Skip::Malformed`].
    pub malformed: u64,
}

impl ReadStats {
    /// Counts one skipped frame.
    pub fn skip(&mut self, why: Skip) {
        match why {
            Skip::UnsupportedLinkType => self.unsupported_link_type += 1,
            Skip::NotIpv4 => self.not_ipv4 += 1,
            Skip::NotTcpUdp => self.not_tcp_udp += 1,
            Skip::Fragment => self.fragments += 1,
            Skip::Truncated => self.truncated += 1,
            Skip::Malformed => self.malformed += 1,
        }
    }

    /// Frames skipped for any reason.
    pub fn skipped(&self) -> u64 {
        self.frames - self.kept
    }

    /// Adds another set of counters.
    pub fn add(&mut self, o: &ReadStats) {
        self.frames += o.frames;
        self.kept += o.kept;
        self.unsupported_link_type += o.unsupported_link_type;
        self.not_ipv4 += o.not_ipv4;
        self.not_tcp_udp += o.not_tcp_udp;
        self.fragments += o.fragments;
        self.truncated += o.truncated;
        self.malformed += o.malformed;
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Finds the IPv4 packet inside a frame of the given link type.
fn ip_payload(link: u32, frame: &[u8]) -> Result<&[u8], Skip> {
    match link {
        linktype::ETHERNET => {
            // VLAN tags (802.1Q, 802.1ad, QinQ), possibly stacked, are skipped.
            let eth = headers::ethernet(frame).ok_or(Skip::Truncated)?;
            if eth.ether_type != headers::ETH_P_IPV4 {
                return Err(Skip::NotIpv4);
            }
            Ok(&frame[eth.l3..])
        }
        linktype::RAW | linktype::RAW_BSD12 | linktype::RAW_BSD14 | linktype::IPV4 => Ok(frame),
        linktype::LINUX_SLL => {
            let et = be16(frame, 14).ok_or(Skip::Truncated)?;
            if et != 0x0800 {
                return Err(Skip::NotIpv4);
            }
            Ok(&frame[16..])
        }
        linktype::LINUX_SLL2 => {
            let et = be16(frame, 0).ok_or(Skip::Truncated)?;
            if et != 0x0800 {
                return Err(Skip::NotIpv4);
            }
            frame.get(20..).ok_or(Skip::Truncated)
        }
        linktype::NULL | linktype::LOOP => {
            let b = frame.get(0..4).ok_or(Skip::Truncated)?;
            let host = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
            let af = if link == linktype::LOOP {
                u32::from_be_bytes([b[0], b[1], b[2], b[3]])
            } else if host < 256 || host.swap_bytes() >= 256 {
                host
            } else {
                host.swap_bytes()
            };
            if af != 2 {
                return Err(Skip::NotIpv4);
            }
            Ok(&frame[4..])
        }
        _ => Err(Skip::UnsupportedLinkType),
    }
}

/// Decodes one captured frame; never panics on any input.
pub fn decode(link: u32, ts_ns: u64, frame: &[u8]) -> Result<PacketInfo<'_>, Skip> {
    let ip = ip_payload(link, frame)?;
    let h = headers::ipv4(ip).map_err(|e| match e {
        headers::Ipv4Error::Truncated => Skip::Truncated,
        headers::Ipv4Error::NotIpv4 => Skip::NotIpv4,
        headers::Ipv4Error::BadHeaderLength => Skip::Malformed,
    })?;
    // Later fragments carry no L4 header (the first one does: only the offset counts here).
    if h.fragment & 0x1fff != 0 {
        return Err(Skip::Fragment);
    }
    if h.proto != 6 && h.proto != 17 {
        return Err(Skip::NotTcpUdp);
    }
    let ihl = h.header_len;
    let sport = be16(ip, ihl).ok_or(Skip::Truncated)?;
    let dport = be16(ip, ihl + 2).ok_or(Skip::Truncated)?;
    Ok(PacketInfo {
        ts_ns,
        ip_len: h.total_len,
        src: h.src,
        dst: h.dst,
        proto: h.proto,
        sport,
        dport,
        header: ip,
        l4_offset: ihl,
    })
}

/// Writes a canonical IPv4 header (20 bytes, checksum filled in) followed by a TCP (20 bytes)
/// or UDP (8 bytes) header into `out`; returns the number of header bytes written.
#[allow(clippy::too_many_arguments)]
pub fn render_header(
    out: &mut [u8; 40],
    ip_len: u16,
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    sport: u16,
    dport: u16,
) -> usize {
    *out = [0; 40];
    out[0] = 0x45;
    out[2..4].copy_from_slice(&ip_len.to_be_bytes());
    out[6] = 0x40; // DF
    out[8] = 64;
    out[9] = proto;
    out[12..16].copy_from_slice(&src);
    out[16..20].copy_from_slice(&dst);
    let mut sum: u32 = 0;
    for i in (0..20).step_by(2) {
        sum += u32::from(u16::from_be_bytes([out[i], out[i + 1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    out[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    out[20..22].copy_from_slice(&sport.to_be_bytes());
    out[22..24].copy_from_slice(&dport.to_be_bytes());
    if proto == 6 {
        out[32] = 0x50; // data offset 5 words
        out[33] = 0x10; // ACK
        out[34..36].copy_from_slice(&0xffffu16.to_be_bytes());
        40
    } else {
        let udp_len = ip_len.saturating_sub(20).max(8);
        out[24..26].copy_from_slice(&udp_len.to_be_bytes());
        28
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(proto: u8) -> Vec<u8> {
        let mut h = [0u8; 40];
        let n = render_header(&mut h, 1500, [1, 2, 3, 4], [5, 6, 7, 8], proto, 1000, 2000);
        h[..n].to_vec()
    }

    #[test]
    fn raw_ip_tcp() {
        let f = ipv4(6);
        let p = decode(linktype::RAW, 7, &f).unwrap();
        assert_eq!(
            (p.ip_len, p.src, p.dst, p.proto, p.sport, p.dport),
            (1500, [1, 2, 3, 4], [5, 6, 7, 8], 6, 1000, 2000)
        );
        assert_eq!(p.ts_ns, 7);
    }

    #[test]
    fn ethernet_vlan_and_sll() {
        let mut e = vec![0u8; 12];
        e.extend_from_slice(&[0x81, 0x00, 0, 5, 0x08, 0x00]);
        e.extend_from_slice(&ipv4(17));
        let p = decode(linktype::ETHERNET, 0, &e).unwrap();
        assert_eq!(p.proto, 17);
        let mut s = vec![0u8; 14];
        s.extend_from_slice(&[0x08, 0x00]);
        s.extend_from_slice(&ipv4(6));
        assert_eq!(decode(linktype::LINUX_SLL, 0, &s).unwrap().dport, 2000);
        let mut s2 = vec![0x08, 0x00];
        s2.extend_from_slice(&[0u8; 18]);
        s2.extend_from_slice(&ipv4(6));
        assert_eq!(decode(linktype::LINUX_SLL2, 0, &s2).unwrap().sport, 1000);
    }

    #[test]
    fn skips() {
        assert_eq!(
            decode(linktype::RAW, 0, &ipv4(1)).unwrap_err(),
            Skip::NotTcpUdp
        );
        let mut frag = ipv4(6);
        frag[7] = 1;
        assert_eq!(decode(linktype::RAW, 0, &frag).unwrap_err(), Skip::Fragment);
        assert_eq!(
            decode(linktype::RAW, 0, &ipv4(6)[..22]).unwrap_err(),
            Skip::Truncated
        );
        assert_eq!(
            decode(linktype::RAW, 0, &[0x60]).unwrap_err(),
            Skip::NotIpv4
        );
        assert_eq!(
            decode(linktype::RAW, 0, &[0x44, 0, 0]).unwrap_err(),
            Skip::Malformed
        );
        assert_eq!(
            decode(999, 0, &ipv4(6)).unwrap_err(),
            Skip::UnsupportedLinkType
        );
        let mut arp = vec![0u8; 12];
        arp.extend_from_slice(&[0x08, 0x06, 0, 0]);
        assert_eq!(
            decode(linktype::ETHERNET, 0, &arp).unwrap_err(),
            Skip::NotIpv4
        );
    }
}
