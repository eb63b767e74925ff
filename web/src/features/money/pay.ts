// What a driver earns for a delivery: price × driver_share, rounded to cents as the server credits it (numeric
// round, half away from zero), computed in whole cents and basis points so no float error moves a cent. The API
// does not return a delivery's pay yet: the share is the company's current one (GET /api/v1/prices), which is
// the one a delivery created from now on is credited with; a delivery created before a change of the share is
// credited with the share of its day (the wallet shows the credit made). Pure: tests/web/web-driver.test.ts.

export function driverPay(price: number, share: number): number {
  const cents = Math.round(price * 100);
  const basisPoints = Math.round(share * 10_000);
  return Math.round((cents * basisPoints) / 10_000) / 100;
}
