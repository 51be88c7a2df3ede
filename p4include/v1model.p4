// nevermiss v1model: the "V1Switch" architecture of the BMv2 simple_switch
// software switch, restated for nevermiss from the API that BMv2 and the
// P4 community's test programs rely on.  See docs/p4include.md.
//
// V1MODEL_VERSION selects between the two published revisions of the API:
//   20180101 (default)  counter/meter/register index is bit<32>
//   20200408            PortId_t typedef; counter<I>, meter<I> and
//                       register<T, I> take the index type as a parameter
// A program picks the newer one with `#define V1MODEL_VERSION 20200408`
// before including this file.

#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include "core.p4"

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

// Match kinds beyond core.p4: value ranges, "don't care or exact", and the
// key fields that feed an action_selector's hash.
match_kind {
    range,
    optional,
    selector
}

// The API revision, visible to the program as a constant.
const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9> PortId_t;
#endif

// Per-packet state shared between the programmable blocks and the switch.
// The @alias names are the BMv2 header fields each member is bound to.
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t ingress_port;   // port the packet arrived on
    PortId_t egress_spec;    // ingress writes the chosen output port here
    PortId_t egress_port;    // in egress: the port actually used
#else
    bit<9>   ingress_port;
    bit<9>   egress_spec;
    bit<9>   egress_port;
#endif
    bit<32>  instance_type;  // normal, clone, resubmit, recirculate, replica
    bit<32>  packet_length;  // bytes, as received
    @alias("queueing_metadata.enq_timestamp")
    bit<32>  enq_timestamp;  // microseconds, when queued (egress only)
    @alias("queueing_metadata.enq_qdepth")
    bit<19>  enq_qdepth;     // queue depth at enqueue
    @alias("queueing_metadata.deq_timedelta")
    bit<32>  deq_timedelta;  // microseconds spent in the queue
    @alias("queueing_metadata.deq_qdepth")
    bit<19>  deq_qdepth;     // queue depth at dequeue
    @alias("intrinsic_metadata.ingress_global_timestamp")
    bit<48>  ingress_global_timestamp;  // microseconds, at ingress start
    @alias("intrinsic_metadata.egress_global_timestamp")
    bit<48>  egress_global_timestamp;   // microseconds, at egress start
    @alias("intrinsic_metadata.mcast_grp")
    bit<16>  mcast_grp;      // non-zero: replicate to this multicast group
    @alias("intrinsic_metadata.egress_rid")
    bit<16>  egress_rid;     // replication id of a multicast copy
    bit<1>   checksum_error; // set when verify_checksum failed
    error    parser_error;   // the parser's final error
    @alias("intrinsic_metadata.priority")
    bit<3>   priority;       // queue priority
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

// An array of `size` counters that the data plane increments and only the
// control plane reads.
extern counter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    counter(bit<32> size, CounterType type);
#if V1MODEL_VERSION >= 20200408
    void count(in I index);
#else
    void count(in bit<32> index);
#endif
}

// One counter per entry of the table that names it in `counters = ...`;
// count() is called from that table's actions.
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

// Colour values written by meters into their result.
#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

// An array of `size` two-rate three-colour meters.
extern meter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    meter(bit<32> size, MeterType type);
#if V1MODEL_VERSION >= 20200408
    void execute_meter<T>(in I index, out T result);
#else
    void execute_meter<T>(in bit<32> index, out T result);
#endif
}

// One meter per entry of the table that names it in `meters = ...`.
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

// An array of `size` cells of type T, readable and writable by the program.
#if V1MODEL_VERSION >= 20200408
extern register<T, I>
#else
extern register<T>
#endif
{
    register(bit<32> size);
    @noSideEffects
#if V1MODEL_VERSION >= 20200408
    void read(out T result, in I index);
#else
    void read(out T result, in bit<32> index);
#endif
#if V1MODEL_VERSION >= 20200408
    void write(in I index, in T value);
#else
    void write(in bit<32> index, in T value);
#endif
}

// Table implementation whose entries point at shared action-data members.
extern action_profile {
    action_profile(bit<32> size);
}

// Writes a pseudo-random value in [lo, hi] into `result`.
extern void random<T>(out T result, in T lo, in T hi);

// Sends `data` to the control plane; `receiver` identifies the listener.
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

// Marks the packet to be dropped at the end of the current pipeline
// (sets egress_spec to the drop port and clears mcast_grp).
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

// result = base + (hash_algo(data) mod max), or base when max is 0.
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

// Table implementation that picks a group member by hashing the `selector`
// key fields.
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,  // copy made at the end of ingress, sent to egress
    E2E   // copy made at the end of egress, sent to egress again
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

// In VerifyChecksum: when `condition` holds and algo(data) != checksum,
// sets standard_metadata.checksum_error.
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

// In ComputeChecksum: when `condition` holds, checksum = algo(data).
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

// As verify_checksum, with the packet payload appended to `data`.
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

// As update_checksum, with the packet payload appended to `data`.
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

// Requests a copy of the packet to the clone session `session`.
extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);

// At the end of ingress, sends the original packet through ingress again,
// keeping the user metadata fields tagged @field_list(index).
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);

// At the end of egress, sends the deparsed packet through ingress again,
// keeping the user metadata fields tagged @field_list(index).
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);

// As clone, keeping the user metadata fields tagged @field_list(index)
// in the copy.
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

// Cuts the outgoing packet to at most `length` bytes.
extern void truncate(in bit<32> length);

// Stops the switch (with a message naming the call site) when `check`
// is false.  assume behaves the same at run time; verification tools treat
// it as a precondition instead of a property.
extern void assert(in bool check);
extern void assume(in bool check);

// Writes a message to the switch log; `{}` in `msg` is replaced by the
// successive members of `data`.
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

// The programmable blocks.  H holds the headers (headers, stacks, unions),
// M the user metadata (a struct).
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

@deparser
control Deparser<H>(packet_out b, in H hdr);

// The switch: parser, checksum verification, ingress, egress, checksum
// update, deparser, in the order packets flow through them.
package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep);

#endif  // _V1_MODEL_P4_
