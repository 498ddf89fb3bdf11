package io.poyang.buf;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BufferSizeClassesTest {

    @Test
    void constantsDescribeSeventeenPowerOfTwoClassesFrom64BytesTo4MiB() {
        assertEquals(64, BufferSizeClasses.MIN_SIZE);
        assertEquals(4 << 20, BufferSizeClasses.MAX_SIZE);
        assertEquals(17, BufferSizeClasses.COUNT);
        assertEquals(BufferSizeClasses.MIN_SIZE, BufferSizeClasses.sizeOf(0));
        assertEquals(BufferSizeClasses.MAX_SIZE, BufferSizeClasses.sizeOf(BufferSizeClasses.COUNT - 1));
    }

    @Test
    void indexForRoundsUpToTheSmallestClassThatFits() {
        assertEquals(0, BufferSizeClasses.indexFor(0));
        assertEquals(0, BufferSizeClasses.indexFor(1));
        assertEquals(0, BufferSizeClasses.indexFor(64));
        assertEquals(1, BufferSizeClasses.indexFor(65));
        assertEquals(1, BufferSizeClasses.indexFor(128));
        assertEquals(2, BufferSizeClasses.indexFor(129));
        assertEquals(16, BufferSizeClasses.indexFor(4 << 20));
        assertEquals(-1, BufferSizeClasses.indexFor((4 << 20) + 1));
        assertEquals(-1, BufferSizeClasses.indexFor(Integer.MAX_VALUE));
        for (int size = 0; size <= (1 << 17); size++) {
            int c = BufferSizeClasses.indexFor(size);
            int classSize = BufferSizeClasses.sizeOf(c);
            assertTrue(classSize >= size, "class of " + size + " is too small");
            assertTrue(c == 0 || BufferSizeClasses.sizeOf(c - 1) < size, "class of " + size + " is not the smallest");
        }
    }

    @Test
    void indexOfCapacityAcceptsOnlyExactClassSizes() {
        for (int c = 0; c < BufferSizeClasses.COUNT; c++) {
            int size = BufferSizeClasses.sizeOf(c);
            assertEquals(c, BufferSizeClasses.indexOfCapacity(size));
            assertEquals(-1, BufferSizeClasses.indexOfCapacity(size + 1));
            assertEquals(-1, BufferSizeClasses.indexOfCapacity(size - 1 == 63 ? 63 : size - 1));
        }
        assertEquals(-1, BufferSizeClasses.indexOfCapacity(32));
        assertEquals(-1, BufferSizeClasses.indexOfCapacity(0));
        assertEquals(-1, BufferSizeClasses.indexOfCapacity(8 << 20));
        assertEquals(-1, BufferSizeClasses.indexOfCapacity(Integer.MIN_VALUE));
    }
}
