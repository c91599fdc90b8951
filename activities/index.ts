import { makeCallAppActivity, type CallAppDeps } from './call-app.js';
import { makeRecordRunActivities, type RecordRunDeps } from './record-run.js';

export type ActivityDeps = CallAppDeps & RecordRunDeps;

export function createRunActivities(deps: ActivityDeps) {
  return {
    callAppActivity: makeCallAppActivity(deps),
    ...makeRecordRunActivities(deps),
  };
}

export type RunActivities = ReturnType<typeof createRunActivities>;
