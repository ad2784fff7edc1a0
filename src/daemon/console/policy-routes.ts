import type { Route } from '../routes.js';
import type { ConsoleParts } from './parts.js';

export function policyRoutes(_parts: ConsoleParts): Route[] {
  return [];
}
