//! wincode support (the `wincode` feature): an adapter for the recursive `Box` fields. wincode's
//! own `Box<T>` schema takes `T`'s static size metadata, which for a type containing itself
//! is a cycle the compiler rejects; this one declares the size dynamic and delegates.

use std::marker::PhantomData;
use std::mem::MaybeUninit;

use wincode::config::ConfigCore;
use wincode::error::{ReadResult, WriteResult};
use wincode::io::{Reader, Writer};
use wincode::{SchemaRead, SchemaWrite};

/// `#[wincode(with = "Boxed<T>")]` on a `Box<T>` field.
#[derive(Debug)]
pub struct Boxed<T>(PhantomData<T>);

// SAFETY: `TYPE_META` is left dynamic; `size_of` and `write` are `T`'s.
unsafe impl<T, C: ConfigCore> SchemaWrite<C> for Boxed<T>
where
    T: SchemaWrite<C, Src = T>,
{
    type Src = Box<T>;

    fn size_of(src: &Self::Src) -> WriteResult<usize> {
        T::size_of(src)
    }

    fn write(writer: impl Writer, src: &Self::Src) -> WriteResult<()> {
        T::write(writer, src)
    }
}

// SAFETY: `TYPE_META` is left dynamic; `dst` is written only when `T::get` succeeded.
unsafe impl<'de, T, C: ConfigCore> SchemaRead<'de, C> for Boxed<T>
where
    T: SchemaRead<'de, C, Dst = T>,
{
    type Dst = Box<T>;

    fn read(reader: impl Reader<'de>, dst: &mut MaybeUninit<Self::Dst>) -> ReadResult<()> {
        let value = T::get(reader)?;
        dst.write(Box::new(value));
        Ok(())
    }
}
