/**
 * The smart home over MQTT: public surface (HomePlugin, the registry, the
 * demo home for simulated mode, and the pieces other parts reuse).
 */
export { HomePlugin, type HomePluginOptions } from './home-plugin.js';
export { DEMO_NODE, DemoHomeSimulator, type DemoHomeOptions } from './demo-simulator.js';
export { DeviceRegistry, type RegistryOptions, type RegistryChange, type EntityView } from './registry.js';
export { HomeController, type ControlResult, type CommandPublisher } from './controller.js';
export { HomeMqttClient, type MqttConnectionSettings, type MqttTls } from './mqtt-client.js';
export { ConfirmationGate, parseYesNo, isRiskyAction, type DecisionRecord, type ConfirmRequest } from './confirm.js';
export { LocalIntents, type IntentMatcher, type IntentRequest } from './local-intents.js';
export { buildCommands, ACTIONS, type DeviceAction, type ActionName, type MqttCommand } from './commands.js';
export { parseDiscoveryMessage, parseDiscoveryTopic } from './discovery.js';
export { expandDiscoveryPayload, ABBREVIATIONS, DEVICE_ABBREVIATIONS } from './abbreviations.js';
export { parseBridgeDevices } from './z2m.js';
export { renderTemplate } from './template.js';
export { HOME_SETTINGS } from './settings.js';
export { HomeError, type HomeErrorCode } from './errors.js';
export type { Entity, EntityState, Component, DeviceInfo } from './entities.js';
