// Owned by the helper building this part; replaced before it lands.
export const CONTROL_SCHEMA = `SELECT 1`;
