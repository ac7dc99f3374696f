// What a coupon takes off an order, as services.discountFor computes it, so
// the redeem screen can show the customer's price before anyone presses Redeem.

export interface Benefit {
  type: string;
  value: number;
  maxDiscount: number;
}

/** discountFor returns the discount in fen on an order of orderAmount fen. */
export function discountFor(c: Benefit, orderAmount: number): number {
  switch (c.type) {
    case 'CASH':
      return Math.min(c.value, orderAmount);
    case 'DISCOUNT': {
      const d = Math.floor((orderAmount * c.value) / 100);
      return c.maxDiscount > 0 ? Math.min(d, c.maxDiscount) : d;
    }
    default:
      return c.value;
  }
}
