import{r as e}from"./rolldown-runtime-XKyaHtl9.js";import{D as t,E as n,I as r,R as i,b as a,d as o,h as s,i as c,j as l,k as u,l as d,m as f,n as p,pt as m,t as h,u as g,w as _,wt as v,x as y,y as b}from"./Badge-Dbq5Z6av.js";import{a as x,i as S,n as C,o as w,p as T,r as E,t as D}from"./BarChart-C47fHZfM.js";import{t as O}from"./index-DvRFyrmT.js";var k=e(v(),1),A=l(),j=t(`
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
          refund {
            amount
            createdAt
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`),M=t(`
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
`),N=t(`
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
`),P=t(`
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
`),F=10;function I(e){let t=r(),[n,i]=(0,k.useState)({capped:!1}),[a,o]=(0,k.useState)(0);return(0,k.useEffect)(()=>{let n=!1;return(async()=>{let r=_(new Date,e,-6).toISOString(),a=[],o;for(let e=0;e<F;e++){let e=await t.query(j,{filter:{status:`SUCCEEDED`,from:r},after:o},{requestPolicy:`network-only`}).toPromise();if(n)return;if(!e.data){i({capped:!1,error:e.error});return}a.push(...e.data.redemptions.edges.map(e=>e.node));let s=e.data.redemptions.pageInfo;if(!s.hasNextPage||!s.endCursor){i({rows:a,capped:!1});return}o=s.endCursor}i({rows:a,capped:!0})})(),()=>{n=!0}},[t,e,a]),{...n,retry:()=>o(e=>e+1)}}function L(){let{t:e,tk:t,locale:r}=u(),{merchantName:l,stores:v}=s(),j=f(),F=I(j.timezone),[L]=i({query:M,requestPolicy:`network-only`}),[R]=i({query:N,requestPolicy:`network-only`}),[z,B]=i({query:P,requestPolicy:`network-only`}),V=(0,k.useMemo)(()=>{if(!F.rows)return null;let e=b(new Date,j.timezone),t=new Map;for(let e of v)t.set(e.id,{count:0,discount:0,refunds:0,refunded:0});let r=new Map,i=_(new Date,j.timezone,-6).getTime();for(let e=0;e<168;e++)r.set(String(e),0);for(let n of F.rows){let a=new Date(n.createdAt),o=Math.floor((a.getTime()-i)/36e5);o>=0&&o<168&&r.set(String(o),(r.get(String(o))??0)+1);let s=t.get(n.store.id)??{count:0,discount:0,refunds:0,refunded:0};b(a,j.timezone)===e&&(s.count+=1,s.discount+=n.discountAmount),n.refund&&b(new Date(n.refund.createdAt),j.timezone)===e&&(s.refunds+=1,s.refunded+=n.refund.amount),t.set(n.store.id,s)}let a=[...r.entries()].map(([e,t])=>{let r=new Date(i+Number(e)*36e5),a=n(r,j.timezone);return{h:Number(e),label:`${a.month}/${a.day} ${String(a.hour).padStart(2,`0`)}:00`,day:`${a.month}/${a.day}`,count:t}}),o={count:0,discount:0,refunds:0,refunded:0};for(let e of t.values())o.count+=e.count,o.discount+=e.discount,o.refunds+=e.refunds,o.refunded+=e.refunded;return{perStore:t,chart:a,total:o}},[F.rows,v,j.timezone]),H=R.data?.findings.edges.length??0,U=L.data?.redemptions.edges??[],W=U.length?U[U.length-1].node.createdAt:null;return(0,A.jsxs)(A.Fragment,{children:[(0,A.jsx)(c,{title:e(`overview.title`),subtitle:`${e(`overview.subtitle`,{merchant:l})} · ${e(`common.timezone`,{tz:j.timezone})}`}),(0,A.jsxs)(`div`,{className:`kpis`,"data-testid":`kpis`,children:[(0,A.jsxs)(`div`,{className:`kpi`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.redeemedToday`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:V?V.total.count.toLocaleString():`—`}),(0,A.jsx)(`div`,{className:`kpi-sub`,children:V?j.money(V.total.discount):``})]}),(0,A.jsxs)(`div`,{className:`kpi`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.discountToday`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:V?j.money(V.total.discount-V.total.refunded):`—`}),(0,A.jsx)(`div`,{className:`kpi-sub`,children:e(`overview.net`)})]}),(0,A.jsxs)(`div`,{className:`kpi`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.refundsToday`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:V?V.total.refunds.toLocaleString():`—`}),(0,A.jsx)(`div`,{className:`kpi-sub`,children:V?j.money(V.total.refunded):``})]}),(0,A.jsxs)(`div`,{className:`kpi ${U.length?`kpi-warning`:``}`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.inFlight`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:L.data?`${U.length}${L.data.redemptions.pageInfo.hasNextPage?`+`:``}`:`—`}),(0,A.jsx)(`div`,{className:`kpi-sub`,children:W?e(`overview.oldest`,{age:a(Date.now()-new Date(W).getTime(),r)}):L.data?e(`overview.noneInFlight`):``})]}),(0,A.jsxs)(m,{to:`/reconciliation`,className:`kpi kpi-link ${H?`kpi-danger`:``}`,"data-testid":`kpi-findings`,children:[(0,A.jsx)(`div`,{className:`kpi-label`,children:e(`overview.openFindings`)}),(0,A.jsx)(`div`,{className:`kpi-value`,children:R.data?`${H}${R.data.findings.pageInfo.hasNextPage?`+`:``}`:R.error?`!`:`—`}),(0,A.jsxs)(`div`,{className:`kpi-sub`,children:[e(`recon.review`),` →`]})]})]}),(0,A.jsx)(p,{title:e(`overview.chart`),actions:F.capped&&(0,A.jsx)(`span`,{className:`muted small`,children:e(`overview.chartCapped`,{n:F.rows?.length??0})}),children:F.error?(0,A.jsx)(g,{error:F.error,onRetry:F.retry}):V?F.rows.length===0?(0,A.jsx)(d,{}):(0,A.jsx)(`div`,{className:`chart`,"data-testid":`hourly-chart`,children:(0,A.jsx)(T,{width:`100%`,height:240,children:(0,A.jsxs)(D,{data:V.chart,margin:{top:8,right:8,bottom:0,left:-16},children:[(0,A.jsx)(x,{vertical:!1,stroke:`#e6e9ef`}),(0,A.jsx)(E,{dataKey:`h`,tickFormatter:e=>V.chart[e]?.day??``,ticks:[0,24,48,72,96,120,144],tick:{fontSize:12,fill:`#667085`},axisLine:!1,tickLine:!1}),(0,A.jsx)(C,{allowDecimals:!1,tick:{fontSize:12,fill:`#667085`},axisLine:!1,tickLine:!1}),(0,A.jsx)(w,{cursor:{fill:`rgba(37,99,235,0.08)`},labelFormatter:e=>V.chart[Number(e)]?.label??``,formatter:t=>[`${t} ${e(`overview.redemptions`)}`,``],separator:``}),(0,A.jsx)(S,{dataKey:`count`,fill:`#2563eb`,radius:[2,2,0,0],isAnimationActive:!1})]})})}):(0,A.jsx)(o,{})}),(0,A.jsx)(p,{title:e(`overview.perStore`),children:F.error?(0,A.jsx)(g,{error:F.error,onRetry:F.retry}):V?v.length===0?(0,A.jsx)(d,{}):(0,A.jsx)(`div`,{className:`table-scroll`,children:(0,A.jsxs)(`table`,{className:`table`,"data-testid":`per-store`,children:[(0,A.jsx)(`thead`,{children:(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`th`,{children:e(`common.store`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.redeemedCount`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.discount`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.refundedCount`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.refundAmount`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`overview.net`)})]})}),(0,A.jsx)(`tbody`,{children:v.map(e=>{let t=V.perStore.get(e.id);return(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`td`,{children:e.name}),(0,A.jsx)(`td`,{className:`num`,children:t.count}),(0,A.jsx)(`td`,{className:`num`,children:j.money(t.discount)}),(0,A.jsx)(`td`,{className:`num`,children:t.refunds}),(0,A.jsx)(`td`,{className:`num`,children:j.money(t.refunded)}),(0,A.jsx)(`td`,{className:`num strong`,children:j.money(t.discount-t.refunded)})]},e.id)})}),(0,A.jsx)(`tfoot`,{children:(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`td`,{children:e(`overview.total`)}),(0,A.jsx)(`td`,{className:`num`,children:V.total.count}),(0,A.jsx)(`td`,{className:`num`,children:j.money(V.total.discount)}),(0,A.jsx)(`td`,{className:`num`,children:V.total.refunds}),(0,A.jsx)(`td`,{className:`num`,children:j.money(V.total.refunded)}),(0,A.jsx)(`td`,{className:`num`,children:j.money(V.total.discount-V.total.refunded)})]})})]})}):(0,A.jsx)(o,{})}),(0,A.jsx)(p,{title:e(`overview.lastJobs`),actions:(0,A.jsxs)(m,{to:`/jobs`,className:`link small`,children:[e(`nav.jobs`),` →`]}),children:z.error&&!z.data?(0,A.jsx)(g,{error:z.error,onRetry:()=>B({requestPolicy:`network-only`})}):z.data?z.data.jobRuns.edges.length===0?(0,A.jsx)(d,{children:e(`jobs.empty`)}):(0,A.jsx)(`div`,{className:`table-scroll`,children:(0,A.jsxs)(`table`,{className:`table`,"data-testid":`last-runs`,children:[(0,A.jsx)(`thead`,{children:(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`th`,{children:e(`jobs.job`)}),(0,A.jsx)(`th`,{children:e(`common.status`)}),(0,A.jsx)(`th`,{children:e(`jobs.started`)}),(0,A.jsx)(`th`,{className:`num`,children:e(`jobs.duration`)}),(0,A.jsx)(`th`,{children:e(`jobs.counts`)})]})}),(0,A.jsx)(`tbody`,{children:z.data.jobRuns.edges.map(({node:e})=>(0,A.jsxs)(`tr`,{children:[(0,A.jsx)(`td`,{className:`strong`,children:t(`job.${e.job}`)}),(0,A.jsx)(`td`,{children:(0,A.jsx)(h,{status:e.status})}),(0,A.jsx)(`td`,{className:`nowrap`,children:j.dateTime(e.startedAt)}),(0,A.jsx)(`td`,{className:`num`,children:y(e.startedAt,e.finishedAt)}),(0,A.jsx)(`td`,{children:(0,A.jsx)(O,{counts:e.counts})})]},e.id))})]})}):(0,A.jsx)(o,{})})]})}export{L as OverviewPage};