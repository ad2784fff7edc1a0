// Owned by the helper building this part; replaced before it lands.
export const STORE_SCHEMA = `SELECT 1`;
