/**
 * GitHub's global node ids in their legacy form (base64 of `<type length>:<Type><database id>`),
 * the `node_id` of REST and the `id` of GraphQL for the same object.
 */
export const userNodeId = (id: number): string => Buffer.from(`04:User${id}`).toString('base64');

export const repositoryNodeId = (id: number): string => Buffer.from(`010:Repository${id}`).toString('base64');
