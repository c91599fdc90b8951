import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { appToJson } from '../../db/repositories/apps.js';
import { AppList, ProjectParams } from '../schemas/apps.js';
import { authErrors, errorResponse } from '../schemas/common.js';

const appsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/v2/projects/:project_id/apps', {
    schema: {
      tags: ['apps'], operationId: 'listApps',
      summary: "A project's apps, by name (what the dashboard offers to pick from)",
      params: ProjectParams,
      response: { 200: AppList, 400: errorResponse('Malformed project id.'), ...authErrors },
    },
  }, async (request) => ({ apps: (await app.repos.apps.list(request.params.project_id)).map(appToJson) }));
};

export default appsRoutes;
