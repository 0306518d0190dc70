// The `curl` example `npm start` prints. It fetches a fresh example offer from the edge and posts
// it, so it works pasted twice in a row (a re-posted identical offer is 409 duplicate_offer while
// its call lives) and from any directory (no relative file path).
export function curlExample(edgeUrl: string, apiKey: string): string[] {
  return [
    `  curl -s ${edgeUrl}/demo/offer.sdp | curl -i -X POST ${edgeUrl}/v1/realtime/calls \\`,
    `    -H 'Authorization: Bearer ${apiKey}' -H 'Content-Type: application/sdp' --data-binary @-`,
  ];
}
