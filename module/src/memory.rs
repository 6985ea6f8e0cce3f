//! What this module instance's memory holds, measured rather than computed: the system
//! allocator (dlmalloc on wasm32) wrapped by `cap`, which counts the bytes allocated and not yet
//! freed, and the size of the wasm linear memory (which never shrinks: the instance's footprint
//! in the host).

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// Bytes allocated on this instance's heap and not yet freed (the allocator's own bookkeeping
/// not included; 0 outside wasm, where this allocator is not installed).
pub fn heap_bytes() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        ALLOCATOR.allocated() as u64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}

/// The size of this instance's linear memory, bytes (0 outside wasm).
pub fn linear_memory_bytes() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size(0) as u64 * 65_536
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}
