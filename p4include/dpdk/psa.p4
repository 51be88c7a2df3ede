// nevermiss dpdk/psa.p4: PSA as the P4-DPDK target declares it, i.e. the
// main psa.p4 plus these methods, which take the byte count explicitly:
//   Counter.count(index, pkt_len), DirectCounter.count(pkt_len),
//   Meter.dpdk_execute(index, [color,] pkt_len),
//   DirectMeter.dpdk_execute([color,] pkt_len).
#ifndef NEVERMISS_PSA_DPDK
#define NEVERMISS_PSA_DPDK 1
#endif
#include "../psa.p4"
