/**
 * How an AWS SDK client is built: in AWS with the SDK's defaults (the function's role and region);
 * with a local stand-in's endpoint (DynamoDB Local, the Step Functions, EventBridge or Lambda
 * stand-ins of `npm start`) at that endpoint, with made-up credentials the stand-ins ignore.
 */
export const awsClientSettings = (localEndpoint: string | undefined) =>
  localEndpoint
    ? {
        endpoint: localEndpoint,
        region: process.env.AWS_REGION ?? 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : {};
