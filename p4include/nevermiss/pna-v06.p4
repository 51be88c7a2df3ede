// nevermiss: the OLD (pre-v0.7) PNA dialect, with the PreControl block, the
// direction / pass / loopedback metadata and a `bool` add_entry.  This is the
// dialect of P4-DPDK and of the P4 community's pna-* test programs.
// Reached through <pna.p4> (unless NEVERMISS_PNA_DIALECT is 3) and always
// through <dpdk/pna.p4>, which defines NEVERMISS_PNA_DPDK to add the P4-DPDK
// variants of the counter and meter externs and the IPsec accelerator.
// See docs/p4include.md for the differences from the other dialect.

#ifndef NEVERMISS_PNA_V06_P4
#define NEVERMISS_PNA_V06_P4

#include "pna-common.p4"

// Recirculation pass number (0 for a packet's first pass).
typedef bit<3> PassNumberUint_t;
@p4runtime_translation("p4.org/pna/v1/PassNumber_t", 8)
type PassNumberUint_t PassNumber_t;

typedef bit<8> PassNumberInHeaderUint_t;
@p4runtime_translation("p4.org/pna/v1/PassNumberInHeader_t", 8)
type PassNumberInHeaderUint_t PassNumberInHeader_t;

PassNumber_t pna_PassNumber_header_to_int(in PassNumberInHeader_t x) {
    return (PassNumber_t) (PassNumberUint_t) (PassNumberInHeaderUint_t) x;
}
PassNumberInHeader_t pna_PassNumber_int_to_header(in PassNumber_t x) {
    return (PassNumberInHeader_t) (PassNumberInHeaderUint_t) (PassNumberUint_t) x;
}

// Value of the `pna_idle_timeout` table property.  (This dialect marks a
// table whose data-plane entries age out with the separate table property
// `idle_timeout_with_auto_delete = true`.)
enum PNA_IdleTimeout_t {
    NO_TIMEOUT,
    NOTIFY_CONTROL
}

// W: width of each count; S: index type.
@noWarn("unused")
extern Counter<W, S> {
    Counter(bit<32> n_counters, PNA_CounterType_t type);
#ifdef NEVERMISS_PNA_DPDK
    void count(in S index);
    void count(in S index, in bit<32> pkt_len);
#else
    // `increment` (bytes) defaults to the packet length.
    void count(in S index, @optional in bit<32> increment);
#endif
}

@noWarn("unused")
extern DirectCounter<W> {
    DirectCounter(PNA_CounterType_t type);
#ifdef NEVERMISS_PNA_DPDK
    void count();
    void count(in bit<32> pkt_len);
#else
    void count(@optional in bit<32> increment);
#endif
}

extern Meter<S> {
    Meter(bit<32> n_meters, PNA_MeterType_t type);
    // Colour-aware when `color` is given, colour-blind otherwise.
    PNA_MeterColor_t execute(in S index, in PNA_MeterColor_t color);
    PNA_MeterColor_t execute(in S index);
#ifdef NEVERMISS_PNA_DPDK
    PNA_MeterColor_t dpdk_execute(in S index, in PNA_MeterColor_t color, in bit<32> pkt_len);
    PNA_MeterColor_t dpdk_execute(in S index, in bit<32> pkt_len);
#endif
}

extern DirectMeter {
    DirectMeter(PNA_MeterType_t type);
#ifdef NEVERMISS_PNA_DPDK
    PNA_MeterColor_t execute(in PNA_MeterColor_t color);
    PNA_MeterColor_t execute();
    PNA_MeterColor_t dpdk_execute(in PNA_MeterColor_t color, in bit<32> pkt_len);
    PNA_MeterColor_t dpdk_execute(in bit<32> pkt_len);
#else
    PNA_MeterColor_t execute(in PNA_MeterColor_t color, @optional in bit<32> pkt_len);
    PNA_MeterColor_t execute(@optional in bit<32> pkt_len);
#endif
}

#ifdef NEVERMISS_PNA_DPDK
// P4-DPDK's inline IPsec engine.
enum ipsec_status {
    IPSEC_SUCCESS,
    IPSEC_ERROR
}

extern ipsec_accelerator {
    ipsec_accelerator();
    // Security association used for the next encryption or decryption.
    void set_sa_index<T>(in T sa_index);
    // Byte offset of the IP header the engine works on.
    void set_ip_header_offset<T>(in T offset);
    // Send the packet through the engine after this pass / do not.
    void enable();
    void disable();
    // True when the packet comes back from the engine; `status` tells
    // whether the engine succeeded.
    bool from_ipsec(out ipsec_status status);
}
#endif

// Which way the packet travels through the NIC.
enum PNA_Direction_t {
    NET_TO_HOST,
    HOST_TO_NET
}

enum PNA_PacketPath_t {
    FROM_NET_PORT,
    FROM_NET_LOOPEDBACK,
    FROM_NET_RECIRCULATED,
    FROM_HOST,
    FROM_HOST_LOOPEDBACK,
    FROM_HOST_RECIRCULATED
}

// ---------------------------------------------------------------------------
// Metadata exchanged between the blocks and the NIC.
// ---------------------------------------------------------------------------

struct pna_pre_input_metadata_t {
    PortId_t          input_port;
    ParserError_t     parser_error;
    PNA_Direction_t   direction;
    PassNumber_t      pass;
    bool              loopedback;
}

// Written by the pre control to request inline decryption.
struct pna_pre_output_metadata_t {
    bool              decrypt;
    SecurityAssocId_t said;
    bit<16>           decrypt_start_offset;  // bytes from the packet start
}

struct pna_main_parser_input_metadata_t {
    PNA_Direction_t   direction;
    PassNumber_t      pass;
    bool              loopedback;
    PortId_t          input_port;
}

struct pna_main_input_metadata_t {
    PNA_Direction_t   direction;
    PassNumber_t      pass;
    bool              loopedback;
    Timestamp_t       timestamp;
    ParserError_t     parser_error;
    ClassOfService_t  class_of_service;
    PortId_t          input_port;
}

struct pna_main_output_metadata_t {
    ClassOfService_t  class_of_service;
}

// ---------------------------------------------------------------------------
// Packet-path functions.  drop_packet and send_to_port are "forwarding
// functions": the last one executed decides the packet's fate.
// ---------------------------------------------------------------------------

extern void drop_packet();
extern void send_to_port(in PortId_t dest_port);
// Sends a copy to `mirror_session_id`; one copy per slot, the last call for a
// slot wins.
extern void mirror_packet(in MirrorSlotId_t mirror_slot_id,
                          in MirrorSessionId_t mirror_session_id);
// Sends the packet through the main parser and control again (pass + 1).
extern void recirculate();

// ---------------------------------------------------------------------------
// Tables with `add_on_miss = true`.
// ---------------------------------------------------------------------------

// Called from the default (miss) action: adds an entry whose key is the key
// that just missed, with action `action_name` (a hit action of the same
// table) and its arguments `action_params`.  True when the entry was added.
extern bool add_entry<T>(string action_name,
                         in T action_params,
                         in ExpireTimeProfileId_t expire_time_profile_id);

extern FlowId_t allocate_flow_id();

// From a hit action of a table that ages its entries: give the matched entry
// a new expiry profile and restart its timer / only restart its timer.
extern void set_entry_expire_time(in ExpireTimeProfileId_t expire_time_profile_id);
extern void restart_expire_timer();

// n2h_value when direction is NET_TO_HOST, h2n_value otherwise.
@pure
extern T SelectByDirection<T>(in PNA_Direction_t direction,
                              in T n2h_value,
                              in T h2n_value);

// ---------------------------------------------------------------------------
// Programmable blocks and the package.
// ---------------------------------------------------------------------------

control PreControlT<PH, PM>(
    in    PH pre_hdr,
    inout PM pre_user_meta,
    in    pna_pre_input_metadata_t  istd,
    inout pna_pre_output_metadata_t ostd);

parser MainParserT<MH, MM>(
    packet_in pkt,
    out   MH main_hdr,
    inout MM main_user_meta,
    in    pna_main_parser_input_metadata_t istd);

control MainControlT<MH, MM>(
    inout MH main_hdr,
    inout MM main_user_meta,
    in    pna_main_input_metadata_t  istd,
    inout pna_main_output_metadata_t ostd);

control MainDeparserT<MH, MM>(
    packet_out pkt,
    in    MH main_hdr,
    in    MM main_user_meta,
    in    pna_main_output_metadata_t ostd);

package PNA_NIC<PH, PM, MH, MM>(
    MainParserT<MH, MM> main_parser,
    PreControlT<PH, PM> pre_control,
    MainControlT<MH, MM> main_control,
    MainDeparserT<MH, MM> main_deparser);

#endif  // NEVERMISS_PNA_V06_P4
