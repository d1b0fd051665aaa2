export {
  BACKUP_PASSPHRASE_ENV,
  type BackupNodeOptions,
  type BackupNodeResult,
  backupNode,
  type RestoreNodeOptions,
  type RestoreNodeResult,
  restoreNode,
} from './backup.js';
export { addCalendarBlock, addCalendarFeed, listCalendar, removeCalendarBlock, removeCalendarFeed, syncCalendar } from './calendar.js';
export { assertCanonicalDomain, type InitNodeOptions, type InitNodeResult, initNode } from './init.js';
export { type KeyListing, listKeys, MAX_PUBLISH_AHEAD_SECONDS, revokeKey, rotateKey } from './keys.js';
export { updateProperty } from './property.js';
export { type NodeStoreOptions, withNodeStore } from './store.js';
