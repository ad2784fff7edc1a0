// PostgreSQL plumbing shared by the PostgreSQL store and the cluster state: where the database is,
// one pool per process, and the versioned schema.
export { isPostgresUrl, redact, resolveStoreLocation, type PgConnectionConfig, type StoreLocation, type StoreLocationInput } from './config.js';
export { PgPool, type PgPoolOptions } from './pool.js';
export { LATEST_SCHEMA_VERSION, migrate, requireCurrentSchema, schemaStatus, type MigrateReport, type SchemaStatus } from './migrate.js';
export { MIGRATIONS, type Migration } from './migrations/index.js';
