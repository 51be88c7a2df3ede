// nevermiss dpdk/pna.p4: PNA as the P4-DPDK target declares it.  Always the
// older (pre-v0.7) dialect, whatever NEVERMISS_PNA_DIALECT says, plus:
//   PNA_HashAlgorithm_t.TOEPLITZ,
//   Counter.count(index[, pkt_len]), DirectCounter.count([pkt_len]),
//   Meter.dpdk_execute(index, [color,] pkt_len),
//   DirectMeter.dpdk_execute([color,] pkt_len),
//   enum ipsec_status and extern ipsec_accelerator.

#ifndef __PNA_P4__
#define __PNA_P4__

#ifndef NEVERMISS_PNA_DPDK
#define NEVERMISS_PNA_DPDK 1
#endif

#include "../core.p4"
#include "../nevermiss/pna-v06.p4"

#endif  // __PNA_P4__
