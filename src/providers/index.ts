/**
 * Public surface of the provider layer (issue 3): what the service and the
 * kernel wire in. See manager.ts for the settings and fallback rules,
 * lua-provider.ts for one Lua-adapted source, errors.ts for the error types.
 */
export { ProviderManager, registerProviderSettings, registerSourceSettings } from './manager.js';
export type { ProviderManagerOptions, ProviderStatus, SourceStatus, SourceDefaults } from './manager.js';
export { LuaAdaptedProvider, DEFAULT_TIMEOUTS, decodeStream } from './lua-provider.js';
export type { LuaProviderOptions } from './lua-provider.js';
export { AdapterRegistry, LuaAdapter } from './adapter.js';
export {
  ProviderError,
  HttpStatusError,
  AuthError,
  ToolsUnsupportedError,
  ProviderTimeoutError,
  ConnectionError,
  TruncatedStreamError,
  MalformedResponseError,
  StreamErrorReported,
  ProviderAbortError,
  AllSourcesFailedError,
  isAbort,
} from './errors.js';
