//! Synthetic traces: packet sizes drawn from a packet-size distribution, flows drawn with a
//! uniform or Zipf popularity, seeded and reproducible; optionally written as pcap.
//!
//! The size files have the format of opp-sim's `gp/pkt_size_cdf/*.dat` (reference A.9):
//! `#` comment lines, then `<IP total length> <fraction of packets>` lines.

use crate::error::{ParamFault, ParseError, SizeFault};
use crate::keys::{crc16_arc, KeySpec};
use crate::packet::{decode, linktype, render_header};
use crate::trace::{HashMode, Trace, TraceBuilder};
use crate::SimError;
use nevermiss_io::pcap::{PcapWriter, TsResolution};
use rand::{Rng, SeedableRng};
use rand_distr::weighted::WeightedAliasIndex;
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64;
use std::fmt;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// Where packet sizes come from.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeSource {
    /// A packet-size distribution file.
    Dist(PathBuf),
    /// Every packet has this IP length.
    Fixed(u16),
}

/// The shortest IP packet a trace can hold: an IPv4 header without options.
pub const MIN_IP_LEN: u16 = 20;

/// Parameters of a synthetic trace; written `key=value` pairs separated by commas.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthSpec {
    /// `dist=<file>` or `size=<bytes>`.
    pub sizes: SizeSource,
    /// `flows=`: number of distinct 5-tuples (default 100000).
    pub flows: u32,
    /// `zipf=`: popularity exponent s; 0 means uniform (default 0).
    pub zipf: f64,
    /// `packets=`: trace length (default 1000000).
    pub packets: u64,
    /// `seed=`: RNG seed (default 1).
    pub seed: u64,
    /// `srcs=`: distinct source addresses (default: one per flow).
    pub srcs: Option<u32>,
    /// `dsts=`: distinct destination addresses (default: one per flow).
    pub dsts: Option<u32>,
    /// `prefixes=`: distinct destination /16 prefixes (default: unconstrained).
    pub prefixes: Option<u32>,
    /// `tcp=`: fraction of TCP flows, the rest UDP (default 0.8).
    pub tcp: f64,
    /// `rate=`: line rate in bit/s at which timestamps are spaced back to back (default 640e9,
    /// i.e. 80 B per ns).
    pub rate: f64,
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec {
            sizes: SizeSource::Fixed(64),
            flows: 100_000,
            zipf: 0.0,
            packets: 1_000_000,
            seed: 1,
            srcs: None,
            dsts: None,
            prefixes: None,
            tcp: 0.8,
            rate: 640e9,
        }
    }
}

/// Parses a count with an optional k/M/G suffix (powers of 1000).
pub fn parse_count(s: &str) -> Result<u64, ParseError> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| ParseError::NotNumber(s.to_string()))?;
    let v = v * mult;
    if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 1e18) {
        return Err(ParseError::NotWholeNumber(s.to_string()));
    }
    Ok(v as u64)
}

impl std::str::FromStr for SynthSpec {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let mut spec = SynthSpec::default();
        let mut have_sizes = false;
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| ParseError::NotKeyValue(part.to_string()))?;
            let v = v.trim();
            spec.set(k.trim(), v).map_err(|why| match why {
                Some(why) => ParseError::BadParam {
                    key: k.to_string(),
                    value: v.to_string(),
                    why,
                },
                None => ParseError::UnknownParam(k.trim().to_string()),
            })?;
            have_sizes |= matches!(k.trim(), "dist" | "size");
        }
        if !have_sizes {
            return Err(ParseError::NoSizes);
        }
        Ok(spec)
    }
}

impl SynthSpec {
    /// Sets the parameter `key` to `v`; `Err(None)` when there is no such parameter.
    fn set(&mut self, key: &str, v: &str) -> Result<(), Option<ParamFault>> {
        use ParamFault::Domain;
        let count = |v: &str| parse_count(v).map_err(|e| ParamFault::Parse(Box::new(e)));
        let as_u32 = |v: &str| u32::try_from(count(v)?).map_err(|_| Domain("too large"));
        match key {
            "dist" => self.sizes = SizeSource::Dist(PathBuf::from(v)),
            "size" => {
                let n = u16::try_from(count(v)?)
                    .map_err(|_| Domain("an IP length is at most 65535"))?;
                if n < MIN_IP_LEN {
                    return Err(Some(Domain(
                        "an IP length is at least 20 (the IPv4 header)",
                    )));
                }
                self.sizes = SizeSource::Fixed(n);
            }
            "flows" => {
                self.flows = as_u32(v)?;
                if self.flows == 0 {
                    return Err(Some(Domain("at least 1 flow")));
                }
            }
            "zipf" => {
                self.zipf = match v {
                    "uniform" => 0.0,
                    _ => v.parse().map_err(|_| Domain("a number or `uniform`"))?,
                };
                if !(self.zipf.is_finite() && self.zipf >= 0.0) {
                    return Err(Some(Domain("the exponent must be >= 0")));
                }
            }
            "packets" => self.packets = count(v)?,
            "seed" => self.seed = v.parse().map_err(|_| Domain("an unsigned integer"))?,
            "srcs" => self.srcs = Some(as_u32(v)?.max(1)),
            "dsts" => self.dsts = Some(as_u32(v)?.max(1)),
            "prefixes" => {
                let n = as_u32(v)?;
                if n == 0 || n > 65536 {
                    return Err(Some(Domain("between 1 and 65536")));
                }
                self.prefixes = Some(n);
            }
            "tcp" => {
                self.tcp = v.parse().map_err(|_| Domain("a fraction"))?;
                if !(0.0..=1.0).contains(&self.tcp) {
                    return Err(Some(Domain("a fraction between 0 and 1")));
                }
            }
            "rate" => {
                self.rate =
                    crate::model::parse_rate(v).map_err(|e| ParamFault::Parse(Box::new(e)))?;
            }
            _ => return Err(None),
        }
        Ok(())
    }
}

impl fmt::Display for SynthSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.sizes {
            SizeSource::Dist(p) => write!(f, "dist={}", p.display())?,
            SizeSource::Fixed(n) => write!(f, "size={n}")?,
        }
        write!(
            f,
            ",flows={},zipf={},packets={},seed={}",
            self.flows, self.zipf, self.packets, self.seed
        )?;
        if let Some(n) = self.srcs {
            write!(f, ",srcs={n}")?;
        }
        if let Some(n) = self.dsts {
            write!(f, ",dsts={n}")?;
        }
        if let Some(n) = self.prefixes {
            write!(f, ",prefixes={n}")?;
        }
        if self.tcp != 0.8 {
            write!(f, ",tcp={}", self.tcp)?;
        }
        if self.rate != 640e9 {
            write!(f, ",rate={}", self.rate)?;
        }
        Ok(())
    }
}

/// A packet-size probability mass function.
#[derive(Clone, Debug, PartialEq)]
pub struct SizePmf {
    /// The IP lengths.
    pub sizes: Vec<u16>,
    /// Normalised to sum 1.
    pub probs: Vec<f64>,
}

impl SizePmf {
    /// Reads a distribution file (`#` comments, then `<bytes> <fraction>` lines).
    pub fn load(path: &Path) -> Result<SizePmf, SimError> {
        let text = std::fs::read_to_string(path).map_err(|e| SimError::io(path, e))?;
        Self::parse(&text).map_err(|error| SimError::Distribution {
            path: path.to_path_buf(),
            error,
        })
    }

    /// Parses the text of a distribution file.
    pub fn parse(text: &str) -> Result<SizePmf, ParseError> {
        let mut sizes = Vec::new();
        let mut probs = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut it = line.split_whitespace();
            let fault = |fault| ParseError::SizeLine { line: i + 1, fault };
            let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) else {
                return Err(fault(SizeFault::Fields));
            };
            let size: f64 = a.parse().map_err(|_| fault(SizeFault::Size(a.into())))?;
            let p: f64 = b
                .parse()
                .map_err(|_| fault(SizeFault::Fraction(b.into())))?;
            if !(size.fract() == 0.0 && (f64::from(MIN_IP_LEN)..=65535.0).contains(&size)) {
                return Err(fault(SizeFault::NotIpLength {
                    size: a.into(),
                    min: MIN_IP_LEN,
                }));
            }
            if !(p.is_finite() && p >= 0.0) {
                return Err(fault(SizeFault::BadFraction(b.into())));
            }
            sizes.push(size as u16);
            probs.push(p);
        }
        let sum: f64 = probs.iter().sum();
        if sizes.is_empty() || sum <= 0.0 {
            return Err(ParseError::EmptyDistribution);
        }
        probs.iter_mut().for_each(|p| *p /= sum);
        Ok(SizePmf { sizes, probs })
    }

    /// Mean read cycles per packet, Σ p·max(1, ceil(len/chunk)) (reference A.4).
    pub fn mean_cycles(&self, chunk: u32) -> f64 {
        self.sizes
            .iter()
            .zip(&self.probs)
            .map(|(&s, &p)| p * f64::from(crate::model::read_cycles(s, chunk)))
            .sum()
    }
}

/// One synthetic flow.
#[derive(Clone, Copy, Debug)]
pub struct Flow {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// 6 (TCP) or 17 (UDP).
    pub proto: u8,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
}

enum Sizes {
    Fixed(u16),
    Alias(Vec<u16>, WeightedAliasIndex<f64>),
}

enum Popularity {
    Uniform(u32),
    Zipf(Zipf<f64>, u32),
}

/// Produces the packets of a synthetic trace.
pub struct Generator {
    /// The flows, indexed by flow number.
    pub flows: Vec<Flow>,
    sizes: Sizes,
    pop: Popularity,
    rng: Pcg64,
    remaining: u64,
    t_ns: f64,
    ns_per_byte: f64,
}

impl Generator {
    /// Builds the flow table; reads the size distribution.
    pub fn new(spec: &SynthSpec) -> Result<Self, SimError> {
        let sizes = match &spec.sizes {
            SizeSource::Fixed(n) => Sizes::Fixed(*n),
            SizeSource::Dist(p) => {
                let pmf = SizePmf::load(p)?;
                let alias = WeightedAliasIndex::new(pmf.probs.clone()).map_err(|error| {
                    SimError::UnusableDistribution {
                        path: p.clone(),
                        error,
                    }
                })?;
                Sizes::Alias(pmf.sizes, alias)
            }
        };
        let mut rng = Pcg64::seed_from_u64(spec.seed);
        let prefixes: Option<Vec<u16>> = spec
            .prefixes
            .map(|n| (0..n).map(|_| rng.random::<u16>()).collect());
        let addr = |rng: &mut Pcg64, pfx: bool| -> [u8; 4] {
            match (&prefixes, pfx) {
                (Some(p), true) => {
                    let hi = p[rng.random_range(0..p.len())];
                    let lo: u16 = rng.random();
                    let mut a = [0; 4];
                    a[..2].copy_from_slice(&hi.to_be_bytes());
                    a[2..].copy_from_slice(&lo.to_be_bytes());
                    a
                }
                _ => rng.random::<u32>().to_be_bytes(),
            }
        };
        let src_pool: Option<Vec<[u8; 4]>> = spec
            .srcs
            .map(|n| (0..n).map(|_| addr(&mut rng, false)).collect());
        let dst_pool: Option<Vec<[u8; 4]>> = spec
            .dsts
            .map(|n| (0..n).map(|_| addr(&mut rng, true)).collect());
        let mut flows = Vec::with_capacity(spec.flows as usize);
        for _ in 0..spec.flows {
            let src = match &src_pool {
                Some(p) => p[rng.random_range(0..p.len())],
                None => addr(&mut rng, false),
            };
            let dst = match &dst_pool {
                Some(p) => p[rng.random_range(0..p.len())],
                None => addr(&mut rng, true),
            };
            let proto = if rng.random::<f64>() < spec.tcp {
                6
            } else {
                17
            };
            let sport = rng.random_range(1024..=u16::MAX);
            let dport = rng.random();
            flows.push(Flow {
                src,
                dst,
                proto,
                sport,
                dport,
            });
        }
        let pop = if spec.zipf == 0.0 {
            Popularity::Uniform(spec.flows)
        } else {
            let z = Zipf::new(f64::from(spec.flows), spec.zipf).map_err(SimError::Zipf)?;
            Popularity::Zipf(z, spec.flows)
        };
        if !(spec.rate.is_finite() && spec.rate > 0.0) {
            return Err(SimError::NoRate);
        }
        Ok(Generator {
            flows,
            sizes,
            pop,
            rng,
            remaining: spec.packets,
            t_ns: 0.0,
            ns_per_byte: 8e9 / spec.rate,
        })
    }

    /// The next packet: `(flow index, IP length, timestamp in ns)`.
    pub fn next_packet(&mut self) -> Option<(u32, u16, u64)> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let flow = match &self.pop {
            Popularity::Uniform(n) => self.rng.random_range(0..*n),
            Popularity::Zipf(z, n) => {
                let r = z.sample(&mut self.rng) as u32;
                r.clamp(1, *n) - 1
            }
        };
        let len = match &self.sizes {
            Sizes::Fixed(n) => *n,
            Sizes::Alias(s, a) => s[a.sample(&mut self.rng)],
        };
        let ts = self.t_ns.round() as u64;
        self.t_ns += f64::from(len) * self.ns_per_byte;
        Some((flow, len, ts))
    }

    /// The header bytes of a packet of `flow` with IP length `len`.
    pub fn header(&self, flow: u32, len: u16, out: &mut [u8; 40]) -> usize {
        let f = &self.flows[flow as usize];
        render_header(out, len, f.src, f.dst, f.proto, f.sport, f.dport)
    }
}

impl SynthSpec {
    /// Generates the trace in memory with the digests of `keys`.
    pub fn generate(
        &self,
        name: &str,
        keys: &[KeySpec],
        hash: HashMode,
    ) -> Result<Trace, SimError> {
        let mut g = Generator::new(self)?;
        let mut b = TraceBuilder::new(name, keys, hash);
        let exact = hash == HashMode::Exact;
        // Keys that depend only on the flow are computed once per flow.
        let mut per_flow: Vec<Option<Vec<(u16, u32)>>> = Vec::with_capacity(keys.len());
        let mut hdr = [0u8; 40];
        for (k, spec) in keys.iter().enumerate() {
            if !spec.is_flow_only() {
                per_flow.push(None);
                continue;
            }
            let mut v = Vec::with_capacity(g.flows.len());
            for f in 0..g.flows.len() as u32 {
                let n = g.header(f, 64, &mut hdr);
                let p = decode(linktype::RAW, 0, &hdr[..n]).expect("rendered headers decode");
                let kb = spec.bytes(&p);
                let id = if exact {
                    b.interner(k).expect("exact mode").id(kb.as_slice())
                } else {
                    0
                };
                v.push((crc16_arc(kb.as_slice()), id));
            }
            per_flow.push(Some(v));
        }
        let mut digests = vec![(0u16, 0u32); keys.len()];
        let any_per_packet = per_flow.iter().any(|v| v.is_none());
        while let Some((flow, len, ts)) = g.next_packet() {
            let n = if any_per_packet {
                g.header(flow, len, &mut hdr)
            } else {
                0
            };
            for (k, d) in digests.iter_mut().enumerate() {
                if let Some(v) = &per_flow[k] {
                    *d = v[flow as usize];
                } else {
                    let p = decode(linktype::RAW, ts, &hdr[..n]).expect("rendered headers decode");
                    let kb = keys[k].bytes(&p);
                    let id = if exact {
                        b.interner(k).expect("exact mode").id(kb.as_slice())
                    } else {
                        0
                    };
                    *d = (crc16_arc(kb.as_slice()), id);
                }
            }
            b.push_digests(len, ts, &digests);
            let st = b.stats_mut();
            st.frames += 1;
            st.kept += 1;
        }
        Ok(b.finish())
    }

    /// Writes the trace as a raw-IP nanosecond pcap holding the IPv4 and TCP/UDP headers of each
    /// packet (captured length = header length, original length = IP length, as in a snapped trace).
    pub fn write_pcap(&self, path: &Path) -> Result<u64, SimError> {
        let io = |e: std::io::Error| SimError::io(path, e);
        let mut g = Generator::new(self)?;
        let f = std::fs::File::create(path).map_err(io)?;
        let mut w = PcapWriter::with_link_type(
            BufWriter::with_capacity(1 << 20, f),
            linktype::RAW,
            TsResolution::Nano,
            65535,
        )
        .map_err(io)?;
        let mut hdr = [0u8; 40];
        let mut n_written = 0u64;
        while let Some((flow, len, ts)) = g.next_packet() {
            let n = g.header(flow, len, &mut hdr);
            w.write_record(&hdr[..n], ts, u32::from(len)).map_err(io)?;
            n_written += 1;
        }
        w.into_inner().map_err(io)?;
        Ok(n_written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_parse_display() {
        let s: SynthSpec = "dist=x.dat,flows=10k,zipf=1.1,packets=2M,seed=7,dsts=100,prefixes=10"
            .parse()
            .unwrap();
        assert_eq!(s.flows, 10_000);
        assert_eq!(s.packets, 2_000_000);
        assert_eq!(s.zipf, 1.1);
        assert_eq!(s.to_string().parse::<SynthSpec>().unwrap(), s);
        assert!("flows=10".parse::<SynthSpec>().is_err());
        assert!("size=70000".parse::<SynthSpec>().is_err());
        assert!("size=19".parse::<SynthSpec>().is_err());
        assert!("size=100,zipf=-1".parse::<SynthSpec>().is_err());
        assert!("size=100,flows=0".parse::<SynthSpec>().is_err());
        assert!("size=100,nonsense".parse::<SynthSpec>().is_err());
    }

    #[test]
    fn pmf_parse() {
        let p = SizePmf::parse("# c\n40 1\n1500 3\n").unwrap();
        assert_eq!(p.sizes, vec![40, 1500]);
        assert_eq!(p.probs, vec![0.25, 0.75]);
        assert_eq!(p.mean_cycles(80), 0.25 + 0.75 * 19.0);
        assert!(SizePmf::parse("40\n").is_err());
        assert!(SizePmf::parse("19 1\n").is_err());
        assert!(SizePmf::parse("40 -1\n").is_err());
        assert!(SizePmf::parse("40.5 1\n").is_err());
        assert!(SizePmf::parse("# only comments\n").is_err());
    }

    #[test]
    fn deterministic_and_seeded() {
        let spec: SynthSpec = "size=100,flows=50,zipf=1.2,packets=1000,seed=3"
            .parse()
            .unwrap();
        let a = spec
            .generate("a", &[KeySpec::FiveTuple], HashMode::Crc16)
            .unwrap();
        let b = spec
            .generate("b", &[KeySpec::FiveTuple], HashMode::Crc16)
            .unwrap();
        assert_eq!(a.keys[0].crc, b.keys[0].crc);
        let mut other = spec.clone();
        other.seed = 4;
        let c = other
            .generate("c", &[KeySpec::FiveTuple], HashMode::Crc16)
            .unwrap();
        assert_ne!(a.keys[0].crc, c.keys[0].crc);
        assert_eq!(a.len(), 1000);
        // 100 B at 640 Gb/s is 1.25 ns apart
        assert_eq!(a.ts_ns[4], 5);
    }

    #[test]
    fn zipf_is_skewed_and_pools_limit_keys() {
        let spec: SynthSpec =
            "size=100,flows=1000,zipf=1.5,packets=20000,seed=1,dsts=20,prefixes=3"
                .parse()
                .unwrap();
        let t = spec
            .generate(
                "z",
                &[KeySpec::FiveTuple, KeySpec::IpDst, KeySpec::IpDst16],
                HashMode::Exact,
            )
            .unwrap();
        let mut counts = vec![0u32; t.keys[0].distinct];
        for &id in t.keys[0].ids.as_ref().unwrap() {
            counts[id as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        // the most popular flow of a Zipf(1.5) over 1000 flows takes about 38 % of packets
        assert!(counts[0] > 6000, "{}", counts[0]);
        assert!(t.keys[1].distinct <= 20);
        assert!(t.keys[2].distinct <= 3);
    }
}
