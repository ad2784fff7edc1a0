// Owned by the helper building this part; replaced before it lands.
export const SIGNING_KEYS_SCHEMA = `SELECT 1`;
