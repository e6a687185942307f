/** The lists plugin: public surface. */
export { ListsPlugin, type ListsPluginOptions } from './lists-plugin.js';
export { ListService, ListError, LISTS_STORE, LIST_NAMES, MAX_ITEM_CHARS, isListName, itemKey, type ListName, type ListItem, type ListChange, type ItemRef, type ListServiceOptions } from './list-service.js';
