import CFeatureGateAtomics

/// A value of one machine word, held in an ``AtomicWord``: the conversions to and from the stored `UInt`.
@usableFromInline
package protocol AtomicWordRepresentable {
    /// The value as the stored word.
    var atomicWord: UInt { get }
    /// The value a stored word holds.
    static func fromAtomicWord(_ word: UInt) -> Self
}

extension UInt: AtomicWordRepresentable {
    @inlinable @inline(__always) package var atomicWord: UInt { self }
    @inlinable @inline(__always) package static func fromAtomicWord(_ word: UInt) -> UInt { word }
}

extension Int: AtomicWordRepresentable {
    @inlinable @inline(__always) package var atomicWord: UInt { UInt(bitPattern: self) }
    @inlinable @inline(__always) package static func fromAtomicWord(_ word: UInt) -> Int { Int(bitPattern: word) }
}

extension UInt8: AtomicWordRepresentable {
    @inlinable @inline(__always) package var atomicWord: UInt { UInt(self) }
    @inlinable @inline(__always) package static func fromAtomicWord(_ word: UInt) -> UInt8 {
        UInt8(truncatingIfNeeded: word)
    }
}

extension Bool: AtomicWordRepresentable {
    @inlinable @inline(__always) package var atomicWord: UInt { self ? 1 : 0 }
    @inlinable @inline(__always) package static func fromAtomicWord(_ word: UInt) -> Bool { word != 0 }
}

/// The orderings a load may ask for (the names of `Synchronization.AtomicLoadOrdering`).
@usableFromInline
package enum AtomicWordLoadOrdering: Sendable {
    case relaxed, acquiring, sequentiallyConsistent
}

/// The orderings a store may ask for (the names of `Synchronization.AtomicStoreOrdering`).
@usableFromInline
package enum AtomicWordStoreOrdering: Sendable {
    case relaxed, releasing, sequentiallyConsistent
}

/// The orderings a read-modify-write may ask for (the names of `Synchronization.AtomicUpdateOrdering`).
@usableFromInline
package enum AtomicWordUpdateOrdering: Sendable {
    case relaxed, acquiring, releasing, acquiringAndReleasing, sequentiallyConsistent

    @inlinable @inline(__always) var memoryOrder: memory_order {
        switch self {
        case .relaxed: memory_order_relaxed
        case .acquiring: memory_order_acquire
        case .releasing: memory_order_release
        case .acquiringAndReleasing: memory_order_acq_rel
        case .sequentiallyConsistent: memory_order_seq_cst
        }
    }
}

/// The address of one atomic word, and the C11 atomic operations on it: what ``AtomicWord`` and
/// ``AtomicWordBuffer`` hand out. It does not own the word; its owner keeps it alive.
///
/// The API mirrors the parts of `Synchronization.Atomic` the package uses (that module needs iOS 18 / macOS 15),
/// so a call site reads the same. Every operation is `@inlinable` over a `static inline` C function: in an
/// optimized build a load is one load instruction in the caller, in any module, with no call, lock, allocation or
/// reference counting. ThreadSanitizer sees every operation (C11 atomics are instrumented).
@frozen
@usableFromInline
package struct UnsafeAtomicWord<Value: AtomicWordRepresentable>: @unchecked Sendable {
    @usableFromInline let address: UnsafeMutablePointer<fg_atomic_word>

    /// Wraps the word at `address`, which must have been initialized (``AtomicWordBuffer`` does it).
    @inlinable @inline(__always)
    package init(address: UnsafeMutablePointer<fg_atomic_word>) {
        self.address = address
    }

    /// Reads the value.
    @inlinable @inline(__always)
    package func load(ordering: AtomicWordLoadOrdering) -> Value {
        let word: UInt
        switch ordering {
        case .relaxed: word = fg_atomic_word_load_relaxed(address)
        case .acquiring: word = fg_atomic_word_load_acquire(address)
        case .sequentiallyConsistent: word = fg_atomic_word_load_seq_cst(address)
        }
        return Value.fromAtomicWord(word)
    }

    /// Writes `desired`.
    @inlinable @inline(__always)
    package func store(_ desired: Value, ordering: AtomicWordStoreOrdering) {
        switch ordering {
        case .relaxed: fg_atomic_word_store_relaxed(address, desired.atomicWord)
        case .releasing: fg_atomic_word_store_release(address, desired.atomicWord)
        case .sequentiallyConsistent: fg_atomic_word_store_seq_cst(address, desired.atomicWord)
        }
    }

    /// Writes `desired` and returns the value it replaced.
    @inlinable @inline(__always)
    package func exchange(_ desired: Value, ordering: AtomicWordUpdateOrdering) -> Value {
        Value.fromAtomicWord(fg_atomic_word_exchange(address, desired.atomicWord, ordering.memoryOrder))
    }

    /// Writes `desired` if the value is `expected`; returns whether it did and the value it found.
    @discardableResult
    @inlinable @inline(__always)
    package func compareExchange(
        expected: Value, desired: Value, ordering: AtomicWordUpdateOrdering
    ) -> (exchanged: Bool, original: Value) {
        var found = expected.atomicWord
        let exchanged = fg_atomic_word_compare_exchange(address, &found, desired.atomicWord, ordering.memoryOrder)
        return (exchanged, Value.fromAtomicWord(found))
    }
}

extension UnsafeAtomicWord where Value: FixedWidthInteger {
    /// Adds `operand`, wrapping on overflow; returns the values before and after.
    @discardableResult
    @inlinable @inline(__always)
    package func wrappingAdd(_ operand: Value, ordering: AtomicWordUpdateOrdering) -> (oldValue: Value, newValue: Value)
    {
        let old = Value.fromAtomicWord(fg_atomic_word_fetch_add(address, operand.atomicWord, ordering.memoryOrder))
        return (old, old &+ operand)
    }

    /// Subtracts `operand`, wrapping on overflow; returns the values before and after.
    @discardableResult
    @inlinable @inline(__always)
    package func wrappingSubtract(
        _ operand: Value, ordering: AtomicWordUpdateOrdering
    ) -> (oldValue: Value, newValue: Value) {
        let old = Value.fromAtomicWord(fg_atomic_word_fetch_sub(address, operand.atomicWord, ordering.memoryOrder))
        return (old, old &- operand)
    }

    /// Adds `operand`; returns the values before and after. Traps on overflow, like `Synchronization.Atomic.add`
    /// (the word has wrapped by then).
    @discardableResult
    @inlinable @inline(__always)
    package func add(_ operand: Value, ordering: AtomicWordUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        let old = Value.fromAtomicWord(fg_atomic_word_fetch_add(address, operand.atomicWord, ordering.memoryOrder))
        return (old, old + operand)
    }

    /// Subtracts `operand`; returns the values before and after. Traps on overflow.
    @discardableResult
    @inlinable @inline(__always)
    package func subtract(_ operand: Value, ordering: AtomicWordUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        let old = Value.fromAtomicWord(fg_atomic_word_fetch_sub(address, operand.atomicWord, ordering.memoryOrder))
        return (old, old - operand)
    }

    /// Sets the bits of `operand`; returns the values before and after.
    @discardableResult
    @inlinable @inline(__always)
    package func bitwiseOr(_ operand: Value, ordering: AtomicWordUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        let old = Value.fromAtomicWord(fg_atomic_word_fetch_or(address, operand.atomicWord, ordering.memoryOrder))
        return (old, old | operand)
    }

    /// Keeps only the bits of `operand`; returns the values before and after.
    @discardableResult
    @inlinable @inline(__always)
    package func bitwiseAnd(
        _ operand: Value, ordering: AtomicWordUpdateOrdering
    ) -> (oldValue: Value, newValue: Value) {
        let old = Value.fromAtomicWord(fg_atomic_word_fetch_and(address, operand.atomicWord, ordering.memoryOrder))
        return (old, old & operand)
    }
}

/// One atomic word that owns its memory: the package's replacement for `Synchronization.Atomic` (iOS 18).
///
/// Like `Atomic`, it is noncopyable and meant to be a `let` of a class (or a `static let`): the word is allocated
/// once, in `init`, and freed in `deinit`, so its address never changes. Reading it from an `@inlinable` method of
/// the owning class is one atomic load of a trivial field (the address) and then of the word: no retain/release.
@frozen
@usableFromInline
package struct AtomicWord<Value: AtomicWordRepresentable>: ~Copyable, @unchecked Sendable {
    /// The operations on the owned word.
    @usableFromInline package let word: UnsafeAtomicWord<Value>

    /// Allocates a word holding `initialValue`.
    @inlinable
    package init(_ initialValue: Value) {
        let address = UnsafeMutablePointer<fg_atomic_word>.allocate(capacity: 1)
        fg_atomic_word_init(address, initialValue.atomicWord)
        word = UnsafeAtomicWord(address: address)
    }

    deinit {
        word.address.deallocate()
    }

    /// Reads the value.
    @inlinable @inline(__always)
    package func load(ordering: AtomicWordLoadOrdering) -> Value { word.load(ordering: ordering) }

    /// Writes `desired`.
    @inlinable @inline(__always)
    package func store(_ desired: Value, ordering: AtomicWordStoreOrdering) { word.store(desired, ordering: ordering) }

    /// Writes `desired` and returns the value it replaced.
    @inlinable @inline(__always)
    package func exchange(_ desired: Value, ordering: AtomicWordUpdateOrdering) -> Value {
        word.exchange(desired, ordering: ordering)
    }

    /// Writes `desired` if the value is `expected`; returns whether it did and the value it found.
    @discardableResult
    @inlinable @inline(__always)
    package func compareExchange(
        expected: Value, desired: Value, ordering: AtomicWordUpdateOrdering
    ) -> (exchanged: Bool, original: Value) {
        word.compareExchange(expected: expected, desired: desired, ordering: ordering)
    }
}

extension AtomicWord where Value: FixedWidthInteger {
    /// Adds `operand`, wrapping on overflow; returns the values before and after.
    @discardableResult
    @inlinable @inline(__always)
    package func wrappingAdd(_ operand: Value, ordering: AtomicWordUpdateOrdering) -> (oldValue: Value, newValue: Value)
    {
        word.wrappingAdd(operand, ordering: ordering)
    }

    /// Subtracts `operand`, wrapping on overflow; returns the values before and after.
    @discardableResult
    @inlinable @inline(__always)
    package func wrappingSubtract(
        _ operand: Value, ordering: AtomicWordUpdateOrdering
    ) -> (oldValue: Value, newValue: Value) {
        word.wrappingSubtract(operand, ordering: ordering)
    }

    /// Adds `operand`; returns the values before and after. Traps on overflow.
    @discardableResult
    @inlinable @inline(__always)
    package func add(_ operand: Value, ordering: AtomicWordUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        word.add(operand, ordering: ordering)
    }

    /// Subtracts `operand`; returns the values before and after. Traps on overflow.
    @discardableResult
    @inlinable @inline(__always)
    package func subtract(_ operand: Value, ordering: AtomicWordUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        word.subtract(operand, ordering: ordering)
    }

    /// Sets the bits of `operand`; returns the values before and after.
    @discardableResult
    @inlinable @inline(__always)
    package func bitwiseOr(_ operand: Value, ordering: AtomicWordUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        word.bitwiseOr(operand, ordering: ordering)
    }

    /// Keeps only the bits of `operand`; returns the values before and after.
    @discardableResult
    @inlinable @inline(__always)
    package func bitwiseAnd(
        _ operand: Value, ordering: AtomicWordUpdateOrdering
    ) -> (oldValue: Value, newValue: Value) {
        word.bitwiseAnd(operand, ordering: ordering)
    }
}

/// A fixed number of atomic words in one allocation, all starting at zero: counters indexed like an array.
///
/// `buffer[index]` is an ``UnsafeAtomicWord`` with the same operations as ``AtomicWord``. Keep it as a `let` of a
/// class; the words are freed when it goes away.
@frozen
@usableFromInline
package struct AtomicWordBuffer<Value: AtomicWordRepresentable>: ~Copyable, @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<fg_atomic_word>
    /// How many words the buffer holds.
    @usableFromInline package let count: Int

    /// Allocates `count` words, each holding `initialValue`.
    package init(repeating initialValue: Value, count: Int) {
        base = .allocate(capacity: count)
        for index in 0..<count { fg_atomic_word_init(base + index, initialValue.atomicWord) }
        self.count = count
    }

    deinit {
        base.deallocate()
    }

    /// The word at `index`, which must be below ``count`` (checked only in debug builds, as for a pointer).
    @inlinable @inline(__always)
    package subscript(index: Int) -> UnsafeAtomicWord<Value> {
        assert(index >= 0 && index < count, "AtomicWordBuffer index out of range")
        return UnsafeAtomicWord(address: base + index)
    }
}
