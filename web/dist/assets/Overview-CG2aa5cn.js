import{r as e}from"./rolldown-runtime-XKyaHtl9.js";import{A as t,C as n,Ct as r,E as i,F as a,L as o,O as s,T as c,b as l,d as u,ft as d,h as f,i as p,l as m,m as h,n as g,t as _,u as v,v as y,y as b}from"./Badge-Cl7S-5ZF.js";import{a as x,i as S,n as C,o as w,p as T,r as E,t as D}from"./BarChart-D3hPgril.js";import{t as O}from"./index-A2_Mom5H.js";var k=e(r(),1),A=t(),j=i(`
  query OverviewRedemptions($filter: RedemptionFilter, $after: String) {
    redemptions(filter: $filter, first: 100, after: $after) {
      edges {
        node {
          redeemNo
          status
          discountAmount
          createdAt
          store {
            id
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`),M=i(`
  query Today($day: String!) {
    statements(from: $day, to: $day) {
      stores {
        store {
          id
        }
        redeemedCount
        redeemedAmount
        refundedCount
        refundedAmount
      }
    }
  }
`),N=i(`
  query InFlight {
    redemptions(filter: { status: PROCESSING }, first: 100) {
      edges {
        node {
          redeemNo
          createdAt
        }
      }
      pageInfo {
        hasNextPage
      }
    }
  }
`),P=i(`
  query OpenFindings {
    findings(filter: { status: OPEN }, first: 100) {
      edges {
        node {
          id
        }
      }
      pageInfo {
        hasNextPage
      }
    }
  }
`),F=i(`
  query LastRuns {
    jobRuns(first: 6) {
      edges {
        node {
          id
          job
          status
          error
          startedAt
          finishedAt
          counts {
            name
            value
          }
        }
      }
    }
  }
`),I=10;function L(e){let t=a(),[r,i]=(0,k.useState)({capped:!1}),[o,s]=(0,k.useState)(0);return(0,k.useEffect)(()=>{let r=!1;return(async()=>{let a=n(new Date,e,-6).toISOString(),o=[],s;for(let e=0;e<I;e++){let e=await t.query(j,{filter:{status:`SUCCEEDED`,from:a},after:s},{requestPolicy:`network-only`}).toPromise();if(r)return;if(!e.data){i({capped:!1,error:e.error});return}o.push(...e.data.redemptions.edges.map(e=>e.node));let n=e.data.redemptions.pageInfo;if(!n.hasNextPage||!n.endCursor){i({rows:o,capped:!1});return}s=n.endCursor}i({rows:o,capped:!0})})(),()=>{r=!0}},[t,e,o]),{...r,retry:()=>s(e=>e+1)}}function R(){let{t:e,tk:t,locale:r}=s(),{merchantName:i,stores:a}=f(),j=h(),I=L(j.timezone),[R]=o({query:N,requestPolicy:`network-only`}),[z]=o({query:P,requestPolicy:`network-only`}),[B,V]=o({query:F,requestPolicy:`network-only`}),H=y(new Date,j.timezone),[U,W]=o({query:M,variables:{day:H},requestPolicy:`network-only`}),G=(0,k.useMemo)(()=>{let e=U.data?.statements.stores;if(!e)return null;let t=new Map;for(let e of a)t.set(e.id,{count:0,discount:0,refunds:0,refunded:0});let n={count:0,discount:0,refunds:0,refunded:0};for(let r of e){let e=t.get(r.store.id)??{count:0,discount:0,refunds:0,refunded:0};e.count+=r.redeemedCount,e.discount+=r.redeemedAmount,e.refunds+=r.refundedCount,e.refunded+=r.refundedAmount,t.set(r.store.id,e),n.count+=r.redeemedCount,n.discount+=r.redeemedAmount,n.refunds+=r.refundedCount,n.refunded+=r.refundedAmount}return{perStore:t,total:n}},[U.data,a]),K=(0,k.useMemo)(()=>{if(!I.rows)return null;let e=n(new Date,j.timezone,-6).getTime(),t=Array(168).fill(0);for(let n of I.rows){let r=Math.floor((new Date(n.createdAt).getTime()-e)/36e5);r>=0&&r<t.length&&(t[r]+=1)}return t.map((t,n)=>{let r=c(new Date(e+n*36e5),j.timezone);return{h:n,label:`${r.month}/${r.day} ${String(r.hour).padStart(2,`0`)}:00`,day:`${r.month}/${r.day}`,count:t}})},[I.rows,j.timezone]),q=z.data?.findings.edges.length??0,J=R.data?.redemptions.edges??[],Y=J.length?J[J.length-1].node.createdAt:null;return(0,A.jsxs)(A.Fragment,{children:[(0,A.jsx)(p,{title:e(`overview.title`),subtitle:`${e(`overview.subtitle`,{merchant:i})} · ${e(`common.timezone`,{tz:j.timezone})}`}),(0,A.jsxs)(`div`,{className:`kpis`,"data-testid":`kpis`,children:[(0,A.jsxs)(`div`,{className:`kpi`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.redeemedToday`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:G?G.total.count.toLocaleString():`—`}),(0,A.jsx)(`div`,{className:`kpi-sub`,children:G?e(`overview.gross`,{amount:j.money(G.total.discount)}):``})]}),(0,A.jsxs)(`div`,{className:`kpi`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.discountToday`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:G?j.money(G.total.discount-G.total.refunded):`—`}),(0,A.jsx)(`div`,{className:`kpi-sub`,children:e(`overview.afterRefunds`)})]}),(0,A.jsxs)(`div`,{className:`kpi`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.refundsToday`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:G?G.total.refunds.toLocaleString():`—`}),(0,A.jsx)(`div`,{className:`kpi-sub`,children:G?j.money(G.total.refunded):``})]}),(0,A.jsxs)(`div`,{className:`kpi ${J.length?`kpi-warning`:``}`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.inFlight`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:R.data?`${J.length}${R.data.redemptions.pageInfo.hasNextPage?`+`:``}`:`—`}),(0,A.jsx)(`div`,{className:`kpi-sub`,children:Y?e(`overview.oldest`,{age:b(Date.now()-new Date(Y).getTime(),r)}):R.data?e(`overview.noneInFlight`):``})]}),(0,A.jsxs)(d,{to:`/reconciliation`,className:`kpi kpi-link ${q?`kpi-danger`:``}`,"data-testid":`kpi-findings`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.openFindings`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:z.data?`${q}${z.data.findings.pageInfo.hasNextPage?`+`:``}`:z.error?`!`:`—`}),(0,A.jsxs)(`div`,{className:`kpi-sub`,children:[e(`recon.review`),` →`]})]})]}),(0,A.jsx)(g,{title:e(`overview.chart`),actions:I.capped&&(0,A.jsx)(`span`,{className:`muted small`,children:e(`overview.chartCapped`,{n:I.rows?.length??0})}),children:I.error?(0,A.jsx)(v,{error:I.error,onRetry:I.retry}):K?I.rows.length===0?(0,A.jsx)(m,{}):(0,A.jsx)(`div`,{className:`chart`,"data-testid":`hourly-chart`,children:(0,A.jsx)(T,{width:`100%`,height:240,children:(0,A.jsxs)(D,{data:K,margin:{top:8,right:8,bottom:0,left:-16},children:[(0,A.jsx)(x,{vertical:!1,stroke:`#e6e9ef`}),(0,A.jsx)(E,{dataKey:`h`,tickFormatter:e=>K[e]?.day??``,ticks:[0,24,48,72,96,120,144],tick:{fontSize:12,fill:`#667085`},axisLine:!1,tickLine:!1}),(0,A.jsx)(C,{allowDecimals:!1,tick:{fontSize:12,fill:`#667085`},axisLine:!1,tickLine:!1}),(0,A.jsx)(w,{cursor:{fill:`rgba(37,99,235,0.08)`},labelFormatter:e=>K[Number(e)]?.label??``,formatter:t=>[`${t} ${e(`overview.redemptions`)}`,``],separator:``}),(0,A.jsx)(S,{dataKey:`count`,fill:`#2563eb`,radius:[2,2,0,0],isAnimationActive:!1})]})})}):(0,A.jsx)(u,{})}),(0,A.jsx)(g,{title:e(`overview.perStore`),children:U.error&&!G?(0,A.jsx)(v,{error:U.error,onRetry:()=>W({requestPolicy:`network-only`})}):G?a.length===0?(0,A.jsx)(m,{}):(0,A.jsx)(`div`,{className:`table-scroll`,children:(0,A.jsxs)(`table`,{className:`table`,"data-testid":`per-store`,children:[(0,A.jsx)(`thead`,{children:(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`th`,{children:e(`common.store`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.redeemedCount`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.discount`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.refundedCount`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.refundAmount`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.net`)})]})}),(0,A.jsx)(`tbody`,{children:a.map(e=>{let t=G.perStore.get(e.id);return(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`td`,{children:e.name}),(0,A.jsx)(`td`,{className:`num`,children:t.count}),(0,A.jsx)(`td`,{className:`num`,children:j.money(t.discount)}),(0,A.jsx)(`td`,{className:`num`,children:t.refunds}),(0,A.jsx)(`td`,{className:`num`,children:j.money(t.refunded)}),(0,A.jsx)(`td`,{className:`num strong`,children:j.money(t.discount-t.refunded)})]},e.id)})}),(0,A.jsx)(`tfoot`,{children:(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`td`,{children:e(`overview.total`)}),(0,A.jsx)(`td`,{className:`num`,children:G.total.count}),(0,A.jsx)(`td`,{className:`num`,children:j.money(G.total.discount)}),(0,A.jsx)(`td`,{className:`num`,children:G.total.refunds}),(0,A.jsx)(`td`,{className:`num`,children:j.money(G.total.refunded)}),(0,A.jsx)(`td`,{className:`num`,children:j.money(G.total.discount-G.total.refunded)})]})})]})}):(0,A.jsx)(u,{})}),(0,A.jsx)(g,{title:e(`overview.lastJobs`),actions:(0,A.jsxs)(d,{to:`/jobs`,className:`link small`,children:[e(`nav.jobs`),` →`]}),children:B.error&&!B.data?(0,A.jsx)(v,{error:B.error,onRetry:()=>V({requestPolicy:`network-only`})}):B.data?B.data.jobRuns.edges.length===0?(0,A.jsx)(m,{children:e(`jobs.empty`)}):(0,A.jsx)(`div`,{className:`table-scroll`,children:(0,A.jsxs)(`table`,{className:`table`,"data-testid":`last-runs`,children:[(0,A.jsx)(`thead`,{children:(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`th`,{children:e(`jobs.job`)}),(0,A.jsx)(`th`,{children:e(`common.status`)}),(0,A.jsx)(`th`,{children:e(`jobs.started`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`jobs.duration`)}),(0,A.jsx)(`th`,{children:e(`jobs.counts`)})]})}),(0,A.jsx)(`tbody`,{children:B.data.jobRuns.edges.map(({node:e})=>(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`td`,{className:`strong`,children:t(`job.${e.job}`)}),(0,A.jsx)(`td`,{children:(0,A.jsx)(_,{status:e.status})}),(0,A.jsx)(`td`,{className:`nowrap`,children:j.dateTime(e.startedAt)}),(0,A.jsx)(`td`,{className:`num`,children:l(e.startedAt,e.finishedAt)}),(0,A.jsx)(`td`,{children:(0,A.jsx)(O,{counts:e.counts})})]},e.id))})]})}):(0,A.jsx)(u,{})})]})}export{R as OverviewPage};