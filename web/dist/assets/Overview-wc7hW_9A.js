import{r as e}from"./rolldown-runtime-XKyaHtl9.js";import{C as t,E as n,O as r,T as i,Tt as a,a as o,b as s,d as c,h as l,k as u,l as d,m as f,mt as p,r as m,t as h,u as g,v as _,y as v,z as y}from"./Page-BtucBy5G.js";import{a as b,i as x,n as S,o as C,p as w,r as T,t as E}from"./BarChart-BgKel2XT.js";import{t as D}from"./index-B7ImyNT8.js";var O=e(a(),1),k=u(),A=n(`
  query WeekByHour($from: Time!, $to: Time!) {
    redemptionsByHour(from: $from, to: $to) {
      hour
      redeemed
    }
  }
`),j=n(`
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
`),M=n(`
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
`),N=n(`
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
`),P=n(`
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
`);function F(){let{t:e,tk:n,locale:a}=r(),{merchantName:u,stores:F}=l(),I=f(),[L,R]=(0,O.useMemo)(()=>{let e=t(new Date,I.timezone,-6);return[e.toISOString(),new Date(e.getTime()+6048e5).toISOString()]},[I.timezone]),[z,B]=y({query:A,variables:{from:L,to:R},requestPolicy:`network-only`}),[V]=y({query:M,requestPolicy:`network-only`}),[H]=y({query:N,requestPolicy:`network-only`}),[U,W]=y({query:P,requestPolicy:`network-only`}),G=_(new Date,I.timezone),[K,q]=y({query:j,variables:{day:G},requestPolicy:`network-only`}),J=(0,O.useMemo)(()=>{let e=K.data?.statements.stores;if(!e)return null;let t=new Map;for(let e of F)t.set(e.id,{count:0,discount:0,refunds:0,refunded:0});let n={count:0,discount:0,refunds:0,refunded:0};for(let r of e){let e=t.get(r.store.id)??{count:0,discount:0,refunds:0,refunded:0};e.count+=r.redeemedCount,e.discount+=r.redeemedAmount,e.refunds+=r.refundedCount,e.refunded+=r.refundedAmount,t.set(r.store.id,e),n.count+=r.redeemedCount,n.discount+=r.redeemedAmount,n.refunds+=r.refundedCount,n.refunded+=r.refundedAmount}return{perStore:t,total:n}},[K.data,F]),Y=(0,O.useMemo)(()=>{let e=z.data?.redemptionsByHour;if(!e)return null;let t=new Date(L).getTime(),n=Array(168).fill(0);for(let r of e){let e=Math.floor((new Date(r.hour).getTime()-t)/36e5);e>=0&&e<n.length&&(n[e]+=r.redeemed)}return n.map((e,n)=>{let r=i(new Date(t+n*36e5),I.timezone);return{h:n,label:`${r.month}/${r.day} ${String(r.hour).padStart(2,`0`)}:00`,day:`${r.month}/${r.day}`,count:e}})},[z.data,L,I.timezone]),X=H.data?.findings.edges.length??0,Z=V.data?.redemptions.edges??[],Q=Z.length?Z[Z.length-1].node.createdAt:null;return(0,k.jsxs)(k.Fragment,{children:[(0,k.jsx)(m,{title:e(`overview.title`),subtitle:`${e(`overview.subtitle`,{merchant:u})} · ${e(`common.timezone`,{tz:I.timezone})}`}),(0,k.jsxs)(`div`,{className:`kpis`,"data-testid":`kpis`,children:[(0,k.jsxs)(`div`,{className:`kpi`,children:[(0,k.jsx)(`div`,{className:`kpi-label`,children:e(`overview.redeemedToday`)}),(0,k.jsx)(`div`,{className:`kpi-value`,children:J?J.total.count.toLocaleString():`—`}),(0,k.jsx)(`div`,{className:`kpi-sub`,children:J?e(`overview.gross`,{amount:I.money(J.total.discount)}):``})]}),(0,k.jsxs)(`div`,{className:`kpi`,children:[(0,k.jsx)(`div`,{className:`kpi-label`,children:e(`overview.discountToday`)}),(0,k.jsx)(`div`,{className:`kpi-value`,children:J?I.money(J.total.discount-J.total.refunded):`—`}),(0,k.jsx)(`div`,{className:`kpi-sub`,children:e(`overview.afterRefunds`)})]}),(0,k.jsxs)(`div`,{className:`kpi`,children:[(0,k.jsx)(`div`,{className:`kpi-label`,children:e(`overview.refundsToday`)}),(0,k.jsx)(`div`,{className:`kpi-value`,children:J?J.total.refunds.toLocaleString():`—`}),(0,k.jsx)(`div`,{className:`kpi-sub`,children:J?I.money(J.total.refunded):``})]}),(0,k.jsxs)(`div`,{className:`kpi ${Z.length?`kpi-warning`:``}`,children:[(0,k.jsx)(`div`,{className:`kpi-label`,children:e(`overview.inFlight`)}),(0,k.jsx)(`div`,{className:`kpi-value`,children:V.data?`${Z.length}${V.data.redemptions.pageInfo.hasNextPage?`+`:``}`:`—`}),(0,k.jsx)(`div`,{className:`kpi-sub`,children:Q?e(`overview.oldest`,{age:v(Date.now()-new Date(Q).getTime(),a)}):V.data?e(`overview.noneInFlight`):``})]}),(0,k.jsxs)(p,{to:`/reconciliation`,className:`kpi kpi-link ${X?`kpi-danger`:``}`,"data-testid":`kpi-findings`,children:[(0,k.jsx)(`div`,{className:`kpi-label`,children:e(`overview.openFindings`)}),(0,k.jsx)(`div`,{className:`kpi-value`,children:H.data?`${X}${H.data.findings.pageInfo.hasNextPage?`+`:``}`:H.error?`!`:`—`}),(0,k.jsxs)(`div`,{className:`kpi-sub`,children:[e(`recon.review`),` →`]})]})]}),(0,k.jsx)(h,{title:e(`overview.chart`),children:z.error?(0,k.jsx)(g,{error:z.error,onRetry:()=>B({requestPolicy:`network-only`})}):Y?z.data.redemptionsByHour.length===0?(0,k.jsx)(d,{}):(0,k.jsx)(`div`,{className:`chart`,"data-testid":`hourly-chart`,children:(0,k.jsx)(w,{width:`100%`,height:240,children:(0,k.jsxs)(E,{data:Y,margin:{top:8,right:8,bottom:0,left:-16},children:[(0,k.jsx)(b,{vertical:!1,stroke:`#e6e9ef`}),(0,k.jsx)(T,{dataKey:`h`,tickFormatter:e=>Y[e]?.day??``,ticks:[0,24,48,72,96,120,144],tick:{fontSize:12,fill:`#667085`},axisLine:!1,tickLine:!1}),(0,k.jsx)(S,{allowDecimals:!1,tick:{fontSize:12,fill:`#667085`},axisLine:!1,tickLine:!1}),(0,k.jsx)(C,{cursor:{fill:`rgba(37,99,235,0.08)`},labelFormatter:e=>Y[Number(e)]?.label??``,formatter:t=>[`${t} ${e(`overview.redemptions`)}`,``],separator:``}),(0,k.jsx)(x,{dataKey:`count`,fill:`#2563eb`,radius:[2,2,0,0],isAnimationActive:!1})]})})}):(0,k.jsx)(c,{})}),(0,k.jsx)(h,{title:e(`overview.perStore`),children:K.error&&!J?(0,k.jsx)(g,{error:K.error,onRetry:()=>q({requestPolicy:`network-only`})}):J?F.length===0?(0,k.jsx)(d,{}):(0,k.jsx)(`div`,{className:`table-scroll`,children:(0,k.jsxs)(`table`,{className:`table`,"data-testid":`per-store`,children:[(0,k.jsx)(`thead`,{children:(0,k.jsxs)(`tr`,{children:[(0,k.jsx)(`th`,{children:e(`common.store`)}),(0,k.jsx)(`th`,{className:`num`,children:e(`overview.redeemedCount`)}),(0,k.jsx)(`th`,{className:`num`,children:e(`overview.discount`)}),(0,k.jsx)(`th`,{className:`num`,children:e(`overview.refundedCount`)}),(0,k.jsx)(`th`,{className:`num`,children:e(`overview.refundAmount`)}),(0,k.jsx)(`th`,{className:`num`,children:e(`overview.net`)})]})}),(0,k.jsx)(`tbody`,{children:F.map(e=>{let t=J.perStore.get(e.id);return(0,k.jsxs)(`tr`,{children:[(0,k.jsx)(`td`,{children:e.name}),(0,k.jsx)(`td`,{className:`num`,children:t.count}),(0,k.jsx)(`td`,{className:`num`,children:I.money(t.discount)}),(0,k.jsx)(`td`,{className:`num`,children:t.refunds}),(0,k.jsx)(`td`,{className:`num`,children:I.money(t.refunded)}),(0,k.jsx)(`td`,{className:`num strong`,children:I.money(t.discount-t.refunded)})]},e.id)})}),(0,k.jsx)(`tfoot`,{children:(0,k.jsxs)(`tr`,{children:[(0,k.jsx)(`td`,{children:e(`overview.total`)}),(0,k.jsx)(`td`,{className:`num`,children:J.total.count}),(0,k.jsx)(`td`,{className:`num`,children:I.money(J.total.discount)}),(0,k.jsx)(`td`,{className:`num`,children:J.total.refunds}),(0,k.jsx)(`td`,{className:`num`,children:I.money(J.total.refunded)}),(0,k.jsx)(`td`,{className:`num`,children:I.money(J.total.discount-J.total.refunded)})]})})]})}):(0,k.jsx)(c,{})}),(0,k.jsx)(h,{title:e(`overview.lastJobs`),actions:(0,k.jsxs)(p,{to:`/jobs`,className:`link small`,children:[e(`nav.jobs`),` →`]}),children:U.error&&!U.data?(0,k.jsx)(g,{error:U.error,onRetry:()=>W({requestPolicy:`network-only`})}):U.data?U.data.jobRuns.edges.length===0?(0,k.jsx)(d,{children:e(`jobs.empty`)}):(0,k.jsx)(`div`,{className:`table-scroll`,children:(0,k.jsxs)(`table`,{className:`table`,"data-testid":`last-runs`,children:[(0,k.jsx)(`thead`,{children:(0,k.jsxs)(`tr`,{children:[(0,k.jsx)(`th`,{children:e(`jobs.job`)}),(0,k.jsx)(`th`,{children:e(`common.status`)}),(0,k.jsx)(`th`,{children:e(`jobs.started`)}),(0,k.jsx)(`th`,{className:`num`,children:e(`jobs.duration`)}),(0,k.jsx)(`th`,{children:e(`jobs.counts`)})]})}),(0,k.jsx)(`tbody`,{children:U.data.jobRuns.edges.map(({node:e})=>(0,k.jsxs)(`tr`,{children:[(0,k.jsx)(`td`,{className:`strong`,children:n(`job.${e.job}`)}),(0,k.jsx)(`td`,{children:(0,k.jsx)(o,{status:e.status})}),(0,k.jsx)(`td`,{className:`nowrap`,children:I.dateTime(e.startedAt)}),(0,k.jsx)(`td`,{className:`num`,children:s(e.startedAt,e.finishedAt)}),(0,k.jsx)(`td`,{children:(0,k.jsx)(D,{counts:e.counts})})]},e.id))})]})}):(0,k.jsx)(c,{})})]})}export{F as OverviewPage};