//! The parser's and the encoder's bookkeeping stacks (open containers, key offsets): their first
//! few items live inline, so the shallow documents most messages are cost no allocation for
//! them; a deeper one moves them to the heap, still bounded by the limit that bounds the stack
//! (`max_depth`, `max_members`).

use alloc::vec::Vec;
use core::ops::{Deref, DerefMut};

/// A stack of at most `N` items inline, all of them on the heap once there were more.
pub(super) struct Stack<T, const N: usize> {
    inline: [T; N],
    /// Items in `inline`, while `heap` is `None`.
    len: usize,
    /// Every item, once there were more than `N` at once (then `inline` is unused).
    heap: Option<Vec<T>>,
}

impl<T: Default, const N: usize> Stack<T, N> {
    pub(super) fn new() -> Self {
        Stack { inline: core::array::from_fn(|_| T::default()), len: 0, heap: None }
    }

    pub(super) fn push(&mut self, item: T) {
        if let Some(heap) = &mut self.heap {
            heap.push(item);
        } else if let Some(slot) = self.inline.get_mut(self.len) {
            *slot = item;
            self.len += 1;
        } else {
            let mut heap = Vec::with_capacity(2 * N);
            heap.extend(self.inline.iter_mut().map(core::mem::take));
            heap.push(item);
            self.len = 0;
            self.heap = Some(heap);
        }
    }

    pub(super) fn pop(&mut self) -> Option<T> {
        if let Some(heap) = &mut self.heap {
            return heap.pop();
        }
        self.len = self.len.checked_sub(1)?;
        Some(core::mem::take(&mut self.inline[self.len]))
    }

    pub(super) fn truncate(&mut self, len: usize) {
        while self.len() > len {
            self.pop();
        }
    }
}

impl<T, const N: usize> Deref for Stack<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.heap {
            Some(heap) => heap,
            None => &self.inline[..self.len],
        }
    }
}

impl<T, const N: usize> DerefMut for Stack<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.heap {
            Some(heap) => heap,
            None => &mut self.inline[..self.len],
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;

    #[test]
    fn items_stay_in_order_across_the_move_to_the_heap_and_back_down() {
        let mut stack = Stack::<u32, 2>::new();
        assert!(stack.is_empty() && stack.pop().is_none());
        stack.push(1);
        stack.push(2);
        assert!(stack.heap.is_none());
        stack.push(3);
        assert!(stack.heap.is_some());
        assert_eq!(&stack[..], &[1, 2, 3]);
        *stack.last_mut().unwrap() = 30;
        assert_eq!(stack.pop(), Some(30));
        stack.truncate(1);
        assert_eq!(&stack[..], &[1]);
        stack.push(4);
        assert_eq!(&stack[..], &[1, 4]);
        stack.truncate(0);
        assert_eq!(stack.pop(), None);
    }

    #[test]
    fn an_inline_stack_pops_what_it_took() {
        let mut stack = Stack::<vec::Vec<u8>, 4>::new();
        stack.push(vec![1]);
        stack.push(vec![2, 2]);
        assert_eq!(stack.len(), 2);
        assert_eq!(stack.pop(), Some(vec![2, 2]));
        assert_eq!(stack.iter().collect::<Vec<_>>(), [&vec![1]]);
    }
}
