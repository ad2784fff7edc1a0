// Owned by the helper building this part; replaced before it lands.
export const SHARED_STATE_SCHEMA = `SELECT 1`;
