import { describe, expect, it } from 'vitest';
import { discountFor } from './discount';

describe('discountFor', () => {
  it.each([
    { name: 'cash, less than the order', give: { type: 'CASH', value: 1000, maxDiscount: 0 }, order: 6800, want: 1000 },
    { name: 'cash, never more than the order', give: { type: 'CASH', value: 1000, maxDiscount: 0 }, order: 650, want: 650 },
    { name: 'percent, rounded down to the fen', give: { type: 'DISCOUNT', value: 20, maxDiscount: 0 }, order: 3333, want: 666 },
    { name: 'percent, capped', give: { type: 'DISCOUNT', value: 20, maxDiscount: 1500 }, order: 10000, want: 1500 },
    { name: 'item worth', give: { type: 'EXCHANGE', value: 1800, maxDiscount: 0 }, order: 500, want: 1800 },
  ])('$name', ({ give, order, want }) => {
    expect(discountFor(give, order)).toBe(want);
  });
});
