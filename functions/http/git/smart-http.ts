import { type GitReply, type GitRequest, gitHandler } from '#http/middleware/git-stack';
import { type SmartHttpService, serveSmartHttp } from '#services/hosted-git';

/**
 * One smart-HTTP route (`info/refs`, `git-upload-pack`, `git-receive-pack`): `git http-backend`'s
 * answer, with caching off as Git's own server sends it.
 */
export const smartHttpHandler = (service: SmartHttpService) =>
  gitHandler(async (request: GitRequest): Promise<GitReply> => {
    const response = await serveSmartHttp(
      request.caller,
      request.params.owner ?? '',
      request.params.repo ?? '',
      {
        service,
        query: request.query,
        contentType: request.header('content-type'),
        contentEncoding: request.header('content-encoding'),
        gitProtocol: request.header('git-protocol'),
        body: request.body,
      },
    );
    return { status: response.status, headers: response.headers, body: response.body };
  });
