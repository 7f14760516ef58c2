import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Config } from './config.ts';

/** The public addresses of the service (the spec's `{base_url}`, `{auth_url}`...). */
export interface PublicUrls {
  /** REST API root, `{base_url}`, e.g. `http://localhost:3000/api/v3`. */
  readonly api: string;
  /** Web host of the OAuth pages, `{auth_url}`; also the host of users' and repositories' html_url. */
  readonly auth: string;
  readonly settings: string;
  readonly import: string;
}

/** What an origin is derived from: an API Gateway proxy event, or the Git front end's headers. */
export type UrlSource = Pick<APIGatewayProxyEvent, 'headers'> & {
  readonly requestContext?: Partial<Pick<APIGatewayProxyEvent['requestContext'], 'domainName' | 'stage'>>;
};

/**
 * Configured URLs win. A deployment without a custom domain cannot know its own address at deploy
 * time (the function would depend on the API that depends on it), so the origin is then taken
 * from API Gateway's request context: `https://<id>.execute-api.<region>.amazonaws.com/<stage>`.
 */
export function publicUrls(config: Config, event: UrlSource): PublicUrls {
  const domain =
    event.requestContext?.domainName ?? event.headers?.Host ?? event.headers?.host ?? 'localhost';
  const stage = event.requestContext?.stage;
  const onDefaultDomain = domain.includes('.execute-api.') && stage;
  const origin = `https://${domain}${onDefaultDomain ? `/${stage}` : ''}`;
  return {
    api: config.baseUrl ?? `${origin}/api/v3`,
    auth: config.authUrl ?? origin,
    settings: config.settingsUrl ?? origin,
    import: config.importUrl ?? origin,
  };
}
