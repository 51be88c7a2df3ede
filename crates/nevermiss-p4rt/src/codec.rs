//! The gRPC codec of the generated client and server: protobuf through prost, as
//! `tonic_prost::ProstCodec`, except that a received message is decoded from the frozen bytes of
//! its frame. Its bytestrings (`Bytes` fields, `build.rs`) then become slices of that one buffer
//! instead of one allocation and copy each, and the decoder advances through `Bytes` rather
//! than tonic's `BytesMut` wrapper; a Write of a thousand table entries has several thousand
//! bytestrings. A `WriteRequest` is decoded by [`crate::wire`] (prost's result, faster for table
//! entries). A message sent is encoded into a `Vec` and copied into the frame at once.

use prost::bytes::{Buf, BufMut};
use prost::Message;
use std::any::{Any, TypeId};
use std::marker::PhantomData;
use tonic::codec::{DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

/// Encodes `T`, decodes `U`.
#[derive(Debug, Clone, Copy)]
pub struct Codec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Codec(PhantomData)
    }
}

impl<T, U> tonic::codec::Codec for Codec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = MessageEncoder<T>;
    type Decoder = MessageDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        MessageEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        MessageDecoder(PhantomData)
    }
}

/// Encodes a message into the frame's buffer.
#[derive(Debug, Clone, Copy)]
pub struct MessageEncoder<T>(PhantomData<T>);

impl<T: Message> Encoder for MessageEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // Into a Vec first, then one copy: every byte written through EncodeBuf (a BytesMut)
        // costs a capacity check and a call, and `Message::encode` would compute the
        // message's length once more just to check the buffer's room, which a Vec, growing
        // as needed, does not need.
        let mut v = Vec::with_capacity(1024);
        item.encode_raw(&mut v);
        buf.put_slice(&v);
        Ok(())
    }
}

/// Decodes a message from its frame's bytes, taken without a copy.
#[derive(Debug, Clone, Copy)]
pub struct MessageDecoder<U>(PhantomData<U>);

impl<U: Message + Default + 'static> Decoder for MessageDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        let frame = buf.copy_to_bytes(buf.remaining());
        // A protobuf parse error is INTERNAL, as gRPC's status code guide says (and tonic's
        // own prost codec does).
        let internal = |e: prost::DecodeError| Status::internal(e.to_string());
        if TypeId::of::<U>() == TypeId::of::<crate::pb::p4::v1::WriteRequest>() {
            let w: Box<dyn Any> =
                Box::new(crate::wire::decode_write_request(frame.clone()).map_err(internal)?);
            if let Ok(u) = w.downcast::<U>() {
                return Ok(Some(*u));
            }
        }
        U::decode(frame).map(Some).map_err(internal)
    }
}

/// A client codec whose requests are already encoded: a controller that prepares its
/// messages ahead (or replays recorded ones) sends the bytes as they are; replies of type `U`
/// are decoded as by [`Codec`]. Use with `tonic::client::Grpc::unary`.
#[derive(Debug, Clone, Copy)]
pub struct PreparedCodec<U>(PhantomData<U>);

impl<U> Default for PreparedCodec<U> {
    fn default() -> Self {
        PreparedCodec(PhantomData)
    }
}

impl<U> tonic::codec::Codec for PreparedCodec<U>
where
    U: Message + Default + Send + 'static,
{
    type Encode = prost::bytes::Bytes;
    type Decode = U;
    type Encoder = PreparedEncoder;
    type Decoder = MessageDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        PreparedEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        MessageDecoder(PhantomData)
    }
}

/// Writes an encoded message into its frame.
#[derive(Debug, Clone, Copy, Default)]
pub struct PreparedEncoder;

impl Encoder for PreparedEncoder {
    type Item = prost::bytes::Bytes;
    type Error = Status;

    fn encode(&mut self, item: Self::Item, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        buf.put_slice(&item);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::pb::p4::v1 as p4;
    use prost::bytes::Bytes;
    use prost::Message;

    #[test]
    fn bytestrings_are_slices_of_the_frame() {
        let req = p4::WriteRequest {
            device_id: 7,
            updates: vec![p4::Update {
                r#type: p4::update::Type::Insert as i32,
                entity: Some(p4::Entity {
                    entity: Some(p4::entity::Entity::TableEntry(Box::new(p4::TableEntry {
                        table_id: 1,
                        metadata: Bytes::from_static(b"meta"),
                        ..Default::default()
                    }))),
                }),
            }],
            ..Default::default()
        };
        let frame = Bytes::from(req.encode_to_vec());
        let back = p4::WriteRequest::decode(frame.clone()).unwrap();
        assert_eq!(back, req);
        let Some(p4::entity::Entity::TableEntry(te)) = back.updates[0]
            .entity
            .as_ref()
            .and_then(|e| e.entity.as_ref())
        else {
            panic!("no table entry")
        };
        let range = frame.as_ptr_range();
        assert!(range.contains(&te.metadata.as_ptr()), "not a copy");
    }
}
