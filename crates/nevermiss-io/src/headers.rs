//! Views of the headers under a frame, for the code that looks into packets outside a P4
//! program: software RSS (`rss.rs`), the hazard simulator's trace reader (`nevermiss-sim`), and
//! the tests. One place for Ethernet/VLAN/IPv4/L4 offsets; every function takes any bytes and
//! never panics (a short or garbled frame is `None` or an error).

/// Ethernet types of VLAN tags: 802.1Q, 802.1ad, and the pre-standard QinQ tag.
const VLAN_TAGS: [u16; 3] = [0x8100, 0x88a8, 0x9100];

/// EtherType of IPv4.
pub const ETH_P_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETH_P_IPV6: u16 = 0x86dd;

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// An Ethernet frame's layer 2: the EtherType after any VLAN tags (stacked tags included),
/// where that type field is, and where the layer-3 header starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ethernet {
    /// The EtherType of the payload: after the last VLAN tag, host byte order.
    pub ether_type: u16,
    /// Offset of the (innermost) EtherType field.
    pub type_offset: usize,
    /// Offset of the layer-3 header.
    pub l3: usize,
}

/// The layer 2 of an Ethernet frame; `None` if the frame ends inside it.
pub fn ethernet(frame: &[u8]) -> Option<Ethernet> {
    let mut off = 12;
    let mut ty = be16(frame, off)?;
    while VLAN_TAGS.contains(&ty) {
        off += 4;
        ty = be16(frame, off)?;
    }
    Some(Ethernet {
        ether_type: ty,
        type_offset: off,
        l3: off + 2,
    })
}

/// Why bytes are not a usable IPv4 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ipv4Error {
    /// The bytes end inside the header.
    Truncated,
    /// The version is not 4.
    NotIpv4,
    /// The header length is below 20 bytes.
    BadHeaderLength,
}

/// An IPv4 header's fields that flow-level code uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    /// Header length in bytes (IHL × 4).
    pub header_len: usize,
    /// The Total Length field: header and payload in bytes, as the header says (not checked
    /// against the bytes given).
    pub total_len: u16,
    /// Fragment offset (in 8-byte units) and the more-fragments flag: non-zero for any
    /// fragment.
    pub fragment: u16,
    /// The Protocol field (6 TCP, 17 UDP, 132 SCTP, ...).
    pub proto: u8,
    /// Source address, network byte order.
    pub src: [u8; 4],
    /// Destination address, network byte order.
    pub dst: [u8; 4],
}

impl Ipv4 {
    /// Whether the packet is a fragment (a first fragment included).
    pub fn is_fragment(&self) -> bool {
        self.fragment != 0
    }
}

/// The IPv4 header at the start of `ip`.
pub fn ipv4(ip: &[u8]) -> Result<Ipv4, Ipv4Error> {
    let first = *ip.first().ok_or(Ipv4Error::Truncated)?;
    if first >> 4 != 4 {
        return Err(Ipv4Error::NotIpv4);
    }
    let header_len = usize::from(first & 0x0f) * 4;
    if header_len < 20 {
        return Err(Ipv4Error::BadHeaderLength);
    }
    if ip.len() < header_len {
        return Err(Ipv4Error::Truncated);
    }
    Ok(Ipv4 {
        header_len,
        total_len: u16::from_be_bytes([ip[2], ip[3]]),
        fragment: u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff,
        proto: ip[9],
        src: [ip[12], ip[13], ip[14], ip[15]],
        dst: [ip[16], ip[17], ip[18], ip[19]],
    })
}

/// Where the layers of an Ethernet frame start, as far as they can be found: the EtherType
/// field, an IPv4 or IPv6 header, and the TCP/UDP/SCTP header (not for fragments).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layers {
    /// Byte offset of the (innermost) EtherType field; `None` for a frame shorter than it.
    pub eth_type: Option<usize>,
    /// Byte offset of a valid IPv4 header ([`ipv4`] accepts it).
    pub ipv4: Option<usize>,
    /// Byte offset of an IPv6 header (its 40 bytes present).
    pub ipv6: Option<usize>,
    /// Byte offset of the TCP, UDP or SCTP header; `None` for fragments and other protocols.
    pub l4: Option<usize>,
}

/// The layers of an Ethernet frame.
pub fn layers(f: &[u8]) -> Layers {
    let mut l = Layers::default();
    let Some(eth) = ethernet(f) else {
        return l;
    };
    l.eth_type = Some(eth.type_offset);
    let ip = eth.l3;
    let proto = match eth.ether_type {
        ETH_P_IPV4 => {
            let Ok(h) = ipv4(&f[ip.min(f.len())..]) else {
                return l;
            };
            l.ipv4 = Some(ip);
            if h.is_fragment() {
                return l;
            }
            l.l4 = Some(ip + h.header_len);
            h.proto
        }
        ETH_P_IPV6 if f.len() >= ip + 40 && f[ip] >> 4 == 6 => {
            l.ipv6 = Some(ip);
            l.l4 = Some(ip + 40);
            f[ip + 6]
        }
        _ => return l,
    };
    if !matches!(proto, 6 | 17 | 132) {
        l.l4 = None;
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(tags: &[u16], ty: u16, rest: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        for t in tags {
            f.extend(t.to_be_bytes());
            f.extend([0, 5]);
        }
        f.extend(ty.to_be_bytes());
        f.extend(rest);
        f
    }

    fn ip_udp() -> Vec<u8> {
        let mut ip = vec![
            0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        ip.extend([0, 53, 0, 54, 0, 8, 0, 0]);
        ip
    }

    #[test]
    fn offsets_under_stacked_tags() {
        for tags in [
            &[][..],
            &[0x8100],
            &[0x88a8, 0x8100],
            &[0x9100, 0x8100, 0x8100],
        ] {
            let f = frame(tags, ETH_P_IPV4, &ip_udp());
            let e = ethernet(&f).unwrap();
            assert_eq!(e.l3, 14 + 4 * tags.len());
            let l = layers(&f);
            assert_eq!(l.ipv4, Some(e.l3));
            assert_eq!(l.l4, Some(e.l3 + 20));
            let h = ipv4(&f[e.l3..]).unwrap();
            assert_eq!((h.proto, h.src, h.dst), (17, [10, 0, 0, 1], [10, 0, 0, 2]));
        }
    }

    #[test]
    fn short_and_garbled_frames_are_no_layers() {
        let f = frame(&[0x8100], ETH_P_IPV4, &ip_udp());
        for n in 0..f.len() {
            let l = layers(&f[..n]);
            if n < 34 + 4 {
                assert_eq!(l.l4, None, "{n}");
            }
        }
        assert_eq!(ipv4(&[0x65; 20]), Err(Ipv4Error::NotIpv4));
        assert_eq!(ipv4(&[0x44; 20]), Err(Ipv4Error::BadHeaderLength));
        assert_eq!(ipv4(&[0x46; 20]), Err(Ipv4Error::Truncated));
        // A fragment has no L4 header to hash.
        let mut ip = ip_udp();
        ip[6] = 0x20;
        assert_eq!(layers(&frame(&[], ETH_P_IPV4, &ip)).l4, None);
    }
}
