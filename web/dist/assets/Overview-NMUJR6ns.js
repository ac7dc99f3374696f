import{r as e}from"./rolldown-runtime-XKyaHtl9.js";import{B as t,C as n,E as r,Et as i,O as a,T as ee,a as o,b as s,d as c,h as l,ht as u,k as d,l as f,m as p,r as m,t as h,u as g,v as te,y as ne}from"./Page-CKqQzJsR.js";import{a as _,i as v,n as y,o as b,p as x,r as S,t as C}from"./BarChart-H-42-lK7.js";import{t as w}from"./index-DrIsKSj6.js";var T=e(i(),1),E=d(),re=r(`
  query WeekByHour($from: Time!, $to: Time!) {
    redemptionsByHour(from: $from, to: $to) {
      hour
      redeemed
    }
  }
`),ie=r(`
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
      lapsed {
        expiredCount
        expiredValue
        voidedCount
      }
    }
  }
`),D=r(`
  query Liability {
    liability {
      at
      unusedCount
      faceValue
      discountCouponsAt
      uncappedDiscountCount
    }
  }
`),O=r(`
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
`),k=r(`
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
`),A=r(`
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
`);function j(){let{t:e,tk:r,locale:i}=a(),{merchantName:d,stores:j,role:M}=l(),N=p(),[P,F]=(0,T.useMemo)(()=>{let e=n(new Date,N.timezone,-6);return[e.toISOString(),new Date(e.getTime()+6048e5).toISOString()]},[N.timezone]),[I,L]=t({query:re,variables:{from:P,to:F},requestPolicy:`network-only`}),[R]=t({query:O,requestPolicy:`network-only`}),[z]=t({query:k,requestPolicy:`network-only`}),[B,V]=t({query:A,requestPolicy:`network-only`}),H=M===`ADMIN`||M===`FINANCE`,[U,W]=t({query:D,requestPolicy:`network-only`,pause:!H}),G=te(new Date,N.timezone),[K,q]=t({query:ie,variables:{day:G},requestPolicy:`network-only`}),J=(0,T.useMemo)(()=>{let e=K.data?.statements.stores;if(!e)return null;let t=new Map;for(let e of j)t.set(e.id,{count:0,discount:0,refunds:0,refunded:0});let n={count:0,discount:0,refunds:0,refunded:0};for(let r of e){let e=t.get(r.store.id)??{count:0,discount:0,refunds:0,refunded:0};e.count+=r.redeemedCount,e.discount+=r.redeemedAmount,e.refunds+=r.refundedCount,e.refunded+=r.refundedAmount,t.set(r.store.id,e),n.count+=r.redeemedCount,n.discount+=r.redeemedAmount,n.refunds+=r.refundedCount,n.refunded+=r.refundedAmount}let r={expired:0,value:0,voided:0};for(let e of K.data?.statements.lapsed??[])r.expired+=e.expiredCount,r.value+=e.expiredValue,r.voided+=e.voidedCount;return{perStore:t,total:n,lapsed:r}},[K.data,j]),Y=U.data?.liability,X=(0,T.useMemo)(()=>{let e=I.data?.redemptionsByHour;if(!e)return null;let t=new Date(P).getTime(),n=Array(168).fill(0);for(let r of e){let e=Math.floor((new Date(r.hour).getTime()-t)/36e5);e>=0&&e<n.length&&(n[e]+=r.redeemed)}return n.map((e,n)=>{let r=ee(new Date(t+n*36e5),N.timezone);return{h:n,label:`${r.month}/${r.day} ${String(r.hour).padStart(2,`0`)}:00`,day:`${r.month}/${r.day}`,count:e}})},[I.data,P,N.timezone]),Z=z.data?.findings.edges.length??0,Q=R.data?.redemptions.edges??[],$=Q.length?Q[Q.length-1].node.createdAt:null;return(0,E.jsxs)(E.Fragment,{children:[(0,E.jsx)(m,{title:e(`overview.title`),subtitle:`${e(`overview.subtitle`,{merchant:d})} · ${e(`common.timezone`,{tz:N.timezone})}`}),(0,E.jsxs)(`div`,{className:`kpis`,"data-testid":`kpis`,children:[(0,E.jsxs)(`div`,{className:`kpi`,children:[(0,E.jsx)(`div`,{className:`kpi-label`,children:e(`overview.redeemedToday`)}),(0,E.jsx)(`div`,{className:`kpi-value`,children:J?J.total.count.toLocaleString():`—`}),(0,E.jsx)(`div`,{className:`kpi-sub`,children:J?e(`overview.gross`,{amount:N.money(J.total.discount)}):``})]}),(0,E.jsxs)(`div`,{className:`kpi`,children:[(0,E.jsx)(`div`,{className:`kpi-label`,children:e(`overview.discountToday`)}),(0,E.jsx)(`div`,{className:`kpi-value`,children:J?N.money(J.total.discount-J.total.refunded):`—`}),(0,E.jsx)(`div`,{className:`kpi-sub`,children:e(`overview.afterRefunds`)})]}),(0,E.jsxs)(`div`,{className:`kpi`,children:[(0,E.jsx)(`div`,{className:`kpi-label`,children:e(`overview.refundsToday`)}),(0,E.jsx)(`div`,{className:`kpi-value`,children:J?J.total.refunds.toLocaleString():`—`}),(0,E.jsx)(`div`,{className:`kpi-sub`,children:J?N.money(J.total.refunded):``})]}),(0,E.jsxs)(`div`,{className:`kpi`,"data-testid":`kpi-expired`,children:[(0,E.jsx)(`div`,{className:`kpi-label`,children:e(`overview.expiredToday`)}),(0,E.jsx)(`div`,{className:`kpi-value`,children:J?J.lapsed.expired.toLocaleString():`—`}),(0,E.jsx)(`div`,{className:`kpi-sub`,children:J?e(`overview.expiredSub`,{amount:N.money(J.lapsed.value),voided:J.lapsed.voided}):``})]}),(0,E.jsxs)(`div`,{className:`kpi ${Q.length?`kpi-warning`:``}`,children:[(0,E.jsx)(`div`,{className:`kpi-label`,children:e(`overview.inFlight`)}),(0,E.jsx)(`div`,{className:`kpi-value`,children:R.data?`${Q.length}${R.data.redemptions.pageInfo.hasNextPage?`+`:``}`:`—`}),(0,E.jsx)(`div`,{className:`kpi-sub`,children:$?e(`overview.oldest`,{age:ne(Date.now()-new Date($).getTime(),i)}):R.data?e(`overview.noneInFlight`):``})]}),(0,E.jsxs)(u,{to:`/reconciliation`,className:`kpi kpi-link ${Z?`kpi-danger`:``}`,"data-testid":`kpi-findings`,children:[(0,E.jsx)(`div`,{className:`kpi-label`,children:e(`overview.openFindings`)}),(0,E.jsx)(`div`,{className:`kpi-value`,children:z.data?`${Z}${z.data.findings.pageInfo.hasNextPage?`+`:``}`:z.error?`!`:`—`}),(0,E.jsxs)(`div`,{className:`kpi-sub`,children:[e(`recon.review`),` →`]})]})]}),H&&(0,E.jsx)(h,{title:e(`overview.liability`),actions:Y?(0,E.jsx)(`span`,{className:`muted small`,children:e(`overview.liabilityAt`,{at:N.dateTime(Y.at)})}):void 0,children:U.error&&!Y?(0,E.jsx)(g,{error:U.error,onRetry:()=>W({requestPolicy:`network-only`})}):Y?(0,E.jsxs)(`div`,{className:`liability`,"data-testid":`liability`,children:[(0,E.jsx)(`p`,{className:`muted small`,children:e(`overview.liabilityHint`)}),(0,E.jsxs)(`div`,{className:`facts`,children:[(0,E.jsxs)(`div`,{className:`fact`,children:[(0,E.jsx)(`div`,{className:`fact-label`,children:e(`overview.unusedCoupons`)}),(0,E.jsx)(`div`,{className:`fact-value kpi-value`,"data-testid":`liability-unused`,children:Y.unusedCount.toLocaleString()})]}),(0,E.jsxs)(`div`,{className:`fact`,children:[(0,E.jsx)(`div`,{className:`fact-label`,children:e(`overview.faceValue`)}),(0,E.jsx)(`div`,{className:`fact-value kpi-value`,"data-testid":`liability-face`,children:N.money(Y.faceValue)})]}),(0,E.jsxs)(`div`,{className:`fact`,children:[(0,E.jsx)(`div`,{className:`fact-label`,children:e(`overview.discountCoupons`)}),(0,E.jsxs)(`div`,{className:`fact-value`,"data-testid":`liability-discount`,children:[r(`discountAt.${Y.discountCouponsAt}`),` `,Y.discountCouponsAt===`CAP`&&(0,E.jsx)(`span`,{className:Y.uncappedDiscountCount>0?`warning-text`:`muted`,children:Y.uncappedDiscountCount>0?e(`overview.uncapped`,{n:Y.uncappedDiscountCount}):e(`overview.noUncapped`)})]})]})]})]}):(0,E.jsx)(c,{})}),(0,E.jsx)(h,{title:e(`overview.chart`),children:I.error?(0,E.jsx)(g,{error:I.error,onRetry:()=>L({requestPolicy:`network-only`})}):X?I.data.redemptionsByHour.length===0?(0,E.jsx)(f,{}):(0,E.jsx)(`div`,{className:`chart`,"data-testid":`hourly-chart`,children:(0,E.jsx)(x,{width:`100%`,height:240,children:(0,E.jsxs)(C,{data:X,margin:{top:8,right:8,bottom:0,left:-16},children:[(0,E.jsx)(_,{vertical:!1,stroke:`#e6e9ef`}),(0,E.jsx)(S,{dataKey:`h`,tickFormatter:e=>X[e]?.day??``,ticks:[0,24,48,72,96,120,144],tick:{fontSize:12,fill:`#667085`},axisLine:!1,tickLine:!1}),(0,E.jsx)(y,{allowDecimals:!1,tick:{fontSize:12,fill:`#667085`},axisLine:!1,tickLine:!1}),(0,E.jsx)(b,{cursor:{fill:`rgba(37,99,235,0.08)`},labelFormatter:e=>X[Number(e)]?.label??``,formatter:t=>[`${t} ${e(`overview.redemptions`)}`,``],separator:``}),(0,E.jsx)(v,{dataKey:`count`,fill:`#2563eb`,radius:[2,2,0,0],isAnimationActive:!1})]})})}):(0,E.jsx)(c,{})}),(0,E.jsx)(h,{title:e(`overview.perStore`),children:K.error&&!J?(0,E.jsx)(g,{error:K.error,onRetry:()=>q({requestPolicy:`network-only`})}):J?j.length===0?(0,E.jsx)(f,{}):(0,E.jsx)(`div`,{className:`table-scroll`,children:(0,E.jsxs)(`table`,{className:`table`,"data-testid":`per-store`,children:[(0,E.jsx)(`thead`,{children:(0,E.jsxs)(`tr`,{children:[(0,E.jsx)(`th`,{children:e(`common.store`)}),(0,E.jsx)(`th`,{className:`num`,children:e(`overview.redeemedCount`)}),(0,E.jsx)(`th`,{className:`num`,children:e(`overview.discount`)}),(0,E.jsx)(`th`,{className:`num`,children:e(`overview.refundedCount`)}),(0,E.jsx)(`th`,{className:`num`,children:e(`overview.refundAmount`)}),(0,E.jsx)(`th`,{className:`num`,children:e(`overview.net`)})]})}),(0,E.jsx)(`tbody`,{children:j.map(e=>{let t=J.perStore.get(e.id);return(0,E.jsxs)(`tr`,{children:[(0,E.jsx)(`td`,{children:e.name}),(0,E.jsx)(`td`,{className:`num`,children:t.count}),(0,E.jsx)(`td`,{className:`num`,children:N.money(t.discount)}),(0,E.jsx)(`td`,{className:`num`,children:t.refunds}),(0,E.jsx)(`td`,{className:`num`,children:N.money(t.refunded)}),(0,E.jsx)(`td`,{className:`num strong`,children:N.money(t.discount-t.refunded)})]},e.id)})}),(0,E.jsx)(`tfoot`,{children:(0,E.jsxs)(`tr`,{children:[(0,E.jsx)(`td`,{children:e(`overview.total`)}),(0,E.jsx)(`td`,{className:`num`,children:J.total.count}),(0,E.jsx)(`td`,{className:`num`,children:N.money(J.total.discount)}),(0,E.jsx)(`td`,{className:`num`,children:J.total.refunds}),(0,E.jsx)(`td`,{className:`num`,children:N.money(J.total.refunded)}),(0,E.jsx)(`td`,{className:`num`,children:N.money(J.total.discount-J.total.refunded)})]})})]})}):(0,E.jsx)(c,{})}),(0,E.jsx)(h,{title:e(`overview.lastJobs`),actions:(0,E.jsxs)(u,{to:`/jobs`,className:`link small`,children:[e(`nav.jobs`),` →`]}),children:B.error&&!B.data?(0,E.jsx)(g,{error:B.error,onRetry:()=>V({requestPolicy:`network-only`})}):B.data?B.data.jobRuns.edges.length===0?(0,E.jsx)(f,{children:e(`jobs.empty`)}):(0,E.jsx)(`div`,{className:`table-scroll`,children:(0,E.jsxs)(`table`,{className:`table`,"data-testid":`last-runs`,children:[(0,E.jsx)(`thead`,{children:(0,E.jsxs)(`tr`,{children:[(0,E.jsx)(`th`,{children:e(`jobs.job`)}),(0,E.jsx)(`th`,{children:e(`common.status`)}),(0,E.jsx)(`th`,{children:e(`jobs.started`)}),(0,E.jsx)(`th`,{className:`num`,children:e(`jobs.duration`)}),(0,E.jsx)(`th`,{children:e(`jobs.counts`)})]})}),(0,E.jsx)(`tbody`,{children:B.data.jobRuns.edges.map(({node:e})=>(0,E.jsxs)(`tr`,{children:[(0,E.jsx)(`td`,{className:`strong`,children:r(`job.${e.job}`)}),(0,E.jsx)(`td`,{children:(0,E.jsx)(o,{status:e.status})}),(0,E.jsx)(`td`,{className:`nowrap`,children:N.dateTime(e.startedAt)}),(0,E.jsx)(`td`,{className:`num`,children:s(e.startedAt,e.finishedAt)}),(0,E.jsx)(`td`,{children:(0,E.jsx)(w,{counts:e.counts})})]},e.id))})]})}):(0,E.jsx)(c,{})})]})}export{j as OverviewPage};